"""Read the DP clause's OPTIONS (and CLI/page defaults) into typed `DPOptions` (spec §1.3).

Each refusal is an `InputError` with a code (spec §6), the rule broken and how to fix it.
"""

from __future__ import annotations

import math

from sqlglot import exp

from core.dpsql.parse.dialect import DPSQL, DPClause
from core.dpsql.parse.ir import DPOptions, NoiseKind
from core.errors import InputError

OPTION_NAMES = {
    "epsilon",
    "delta",
    "max_groups_contributed",
    "kappa",
    "privacy_unit_column",
    "max_rows_per_group",
    "threshold_weight",
    "quantile_grid_size",
    "min_privacy_units_per_group",
    "group_selection_strategy",
    "noise",
}


def literal_value(node: exp.Expression):
    if isinstance(node, exp.Neg):
        inner = literal_value(node.this)
        return -inner if isinstance(inner, (int, float)) else None
    if isinstance(node, exp.Literal):
        if node.is_string:
            return node.this
        text = node.this
        try:
            return int(text)
        except ValueError:
            return float(text)
    if isinstance(node, exp.Column):
        return node.name
    if isinstance(node, exp.Null):
        return None
    if isinstance(node, exp.Div):
        a, b = literal_value(node.this), literal_value(node.expression)
        if isinstance(a, (int, float)) and isinstance(b, (int, float)) and b != 0:
            return a / b
    return node


def read_options(clause: DPClause, defaults: dict) -> DPOptions:
    """Options written in the query win over `defaults` (CLI flags, dataset policy)."""
    given: dict = {}
    for item in clause.expressions or []:
        if not isinstance(item, exp.EQ) or not isinstance(item.this, exp.Column):
            raise InputError(
                f"DPX-V033 malformed option `{item.sql(dialect=DPSQL)}`. Rule: OPTIONS holds name = value "
                "pairs. Fix: write e.g. OPTIONS (epsilon = 1, delta = 1e-5)."
            )
        name = item.this.name.lower()
        if ("max_groups_contributed" if name == "kappa" else name) in given:
            raise InputError(f"DPX-V033 option `{name}` is given twice. Fix: keep one value.")
        if name not in OPTION_NAMES:
            raise InputError(
                f"DPX-V033 unknown option `{name}`. Rule: only "
                f"{', '.join(sorted(OPTION_NAMES))} are accepted. Fix: remove or rename it."
            )
        given["max_groups_contributed" if name == "kappa" else name] = literal_value(
            item.expression
        )
    merged = {k: v for k, v in defaults.items() if v is not None}
    merged.update({k: v for k, v in given.items()})
    return _checked_options(merged)


def _checked_options(o: dict) -> DPOptions:
    strategy = str(o.get("group_selection_strategy", "LAPLACE_THRESHOLD")).upper()
    if strategy not in ("LAPLACE_THRESHOLD", "PUBLIC_GROUPS"):
        raise InputError(
            f"DPX-V033 group_selection_strategy = {strategy} is unknown. "
            "Fix: use LAPLACE_THRESHOLD (default) or PUBLIC_GROUPS."
        )
    public_groups = strategy == "PUBLIC_GROUPS"
    if public_groups and o.get("delta") is None:
        o = {**o, "delta": 0.0}  # no thresholding: delta is not used
    eps = o.get("epsilon")
    if eps is None:
        raise InputError(
            "DPX-V030 Differential privacy option EPSILON must be set and non-NULL. "
            "Fix: add epsilon = 1 to OPTIONS (or pass --epsilon)."
        )
    if not isinstance(eps, (int, float)) or not math.isfinite(eps) or eps <= 0:
        raise InputError(
            f"DPX-V030 epsilon must be a finite number > 0, but is {eps}. "
            "Fix: use e.g. epsilon = 1 (smaller is more private)."
        )
    delta = o.get("delta")
    if delta is None:
        raise InputError(
            "DPX-V031 Differential privacy option DELTA must be set. Rule: thresholding of "
            "groups needs delta > 0. Fix: add delta = 1e-5 to OPTIONS (or pass --delta)."
        )
    if not isinstance(delta, (int, float)) or not 0 <= delta <= 1 or math.isnan(delta):
        raise InputError(
            f"DPX-V031 Delta must be in the inclusive interval [0,1], but is {delta}. "
            "Fix: use e.g. delta = 1e-5."
        )
    if delta == 1:
        raise InputError(
            "DPX-V031 delta = 1 gives no privacy guarantee (any group could be released). "
            "Fix: use delta < 1, e.g. 1e-5."
        )
    if delta == 0 and not public_groups:
        raise InputError(
            "DPX-V031 delta = 0 with group thresholding means nothing could ever be released "
            "(tau is infinite). Fix: use delta > 0, e.g. 1e-5."
        )
    cu = o.get("max_groups_contributed")
    if cu is None:
        raise InputError(
            "DPX-V032 max_groups_contributed (C_u) must be set. Rule: each privacy unit may "
            "influence at most C_u groups; it is never assumed. Fix: add "
            "max_groups_contributed = 1 to OPTIONS (or pass --max-groups)."
        )
    if not isinstance(cu, int) or isinstance(cu, bool) or cu < 1:
        raise InputError(
            f"DPX-V032 max_groups_contributed must be an integer >= 1, but is {cu}. "
            "Fix: use e.g. max_groups_contributed = 2."
        )
    k = o.get("max_rows_per_group", 5)
    if not isinstance(k, int) or k < 1:
        raise InputError(
            f"DPX-V033 max_rows_per_group must be an integer >= 1, got {k}. "
            "Fix: use e.g. max_rows_per_group = 5 (the default)."
        )
    weight = o.get("threshold_weight", 1.0)
    if not isinstance(weight, (int, float)) or not weight > 0:
        raise InputError(
            f"DPX-V033 threshold_weight must be > 0, got {weight}. "
            "Fix: use a weight near 1 (the default)."
        )
    grid = o.get("quantile_grid_size", 1001)
    if not isinstance(grid, int) or grid < 2:
        raise InputError(
            f"DPX-V033 quantile_grid_size must be an integer >= 2, got {grid}. "
            "Fix: use e.g. quantile_grid_size = 1001 (the default)."
        )
    m = o.get("min_privacy_units_per_group")
    if m is not None and (not isinstance(m, int) or m < 1):
        raise InputError(
            f"DPX-V033 min_privacy_units_per_group must be an integer >= 1, got {m}. "
            "Fix: use e.g. min_privacy_units_per_group = 10, or leave it out."
        )
    noise = _noise(o.get("noise"), delta)
    uid = o.get("privacy_unit_column")
    return DPOptions(
        float(eps),
        float(delta),
        cu,
        None if uid is None else str(uid),
        k,
        float(weight),
        grid,
        m,
        public_groups,
        noise,
    )


def _noise(value, delta: float) -> NoiseKind:
    """The noise of counts and sums: laplace (default) or gaussian, which needs delta > 0."""
    text = "laplace" if value is None else str(value).strip().lower()
    try:
        noise = NoiseKind(text)
    except ValueError:
        raise InputError(
            f"DPX-V033 noise = {value} is unknown. Fix: use noise = 'laplace' (the default) or "
            "noise = 'gaussian'."
        ) from None
    if noise is NoiseKind.GAUSSIAN and not delta > 0:
        raise InputError(
            "DPX-V031 noise = 'gaussian' needs delta > 0 (the Gaussian mechanism is (epsilon, "
            "delta)-DP). Fix: add delta = 1e-6 to OPTIONS (or pass --delta), or use laplace."
        )
    return noise
