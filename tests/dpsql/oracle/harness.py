"""Run one query on two neighbouring catalogues with the same seed and check the DP contract.

For every query the harness checks, as an attacker holding both neighbours would:

(a) sensitivity — the exact per-partition statistics that the noise is added to (the
    `cross_user` stage, captured from the engine) differ by at most each mechanism's
    per-partition sensitivity, at most C_u partitions change, and with the same seed (hence
    the same salt and the same noise draws) released COUNT/SUM values differ by at most the
    same bound in value units; a Gaussian (`noise = 'gaussian'`) is calibrated to at least the
    L2 bound √C_u·Δ and the vector of per-partition changes stays within it in L2;
(b) partition selection — a partition that exists in only one neighbour is released, over
    `COPIES` independent releases, no more often than a Binomial(runs, δ) count allows at a
    false-alarm rate of 1e-6 (with PUBLIC_GROUPS the released key set must not differ at all);
(c) refusals — the outcome (released, or refused with rule code X) is identical on D and D';
(d) robustness — no exception other than `InputError` (a refusal carries a DPX rule code);
    the engine's own time limit turns a runaway query into a refusal, never a hang.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from functools import cache

import numpy as np
import pandas as pd

from core.dpsql.catalog import Catalog
from core.dpsql.execute.engine import Engine
from core.dpsql.parse.ir import AggKind
from core.dpsql.plan.planner import Plan
from core.dpsql.release import noise as release_module
from core.dpsql.service import prepare
from core.errors import InputError
from core.privacy import Accountant, DiscreteGaussian, Noise
from tests.dpsql.helpers import release_of

from .neighbours import Neighbours, Victim, neighbours

COPIES = 1000  # independent runs of the threshold mechanism per unique partition
MAX_PARTITIONS_CHECKED = 5
SELECTION_SEED = 10_000
FALSE_ALARM = 1e-6
ENGINE_TIMEOUT_S = 10.0
RULE = re.compile(r"DPX-[A-Z]\d{3}")
# a failure of HAVING / ORDER BY / LIMIT over the released rows is a function of the release
# (post-processing), so it may differ between neighbours like any released value
POST_PROCESSING_ERROR = "DPX-E002"
INTERNAL_ERROR = "DPX-E009"  # run() masks an unexpected exception after the charge as this
LINEAR_KINDS = (AggKind.COUNT_UNITS, AggKind.COUNT_ROWS, AggKind.COUNT_VALUES, AggKind.SUM)


class RecordingEngine(Engine):
    """The real sandbox, remembering the exact frame of the last statement it ran."""

    last_exact: pd.DataFrame | None = None

    def frame(self, sql: str, exact: bool = True) -> pd.DataFrame:
        out = super().frame(sql, exact)
        if exact:
            self.last_exact = out
        return out


@dataclass
class Outcome:
    """What one neighbour produced: a release (plan, exact stage, released rows) or a refusal."""

    rule: str | None = None  # DPX code of a refusal; None when released
    message: str = ""
    crash: str | None = None  # type and text of a non-InputError exception
    plan: Plan | None = None
    cross: pd.DataFrame | None = None
    released: pd.DataFrame | None = None

    @property
    def label(self) -> str:
        if self.crash:
            return f"crash {self.crash}"
        return f"refused {self.rule}" if self.rule or self.message else "released"


@dataclass
class Verdict:
    sql: str
    victim: Victim
    with_victim: Outcome
    without_victim: Outcome
    violations: list[str] = field(default_factory=list)

    def summary(self) -> str:
        head = f"[{self.victim}] D: {self.with_victim.label}; D': {self.without_victim.label}"
        return head + "".join(f"\n  - {v}" for v in self.violations)


@cache
def _engines(victim: Victim) -> tuple[Neighbours, RecordingEngine]:
    pair = neighbours(victim)
    return pair, RecordingEngine(pair.with_victim, timeout_s=ENGINE_TIMEOUT_S)


@cache
def _without_victim() -> RecordingEngine:
    """D' is the same population for every victim variant: one engine, one run per query."""
    return RecordingEngine(neighbours(Victim.HEAVY).without_victim, timeout_s=ENGINE_TIMEOUT_S)


@cache
def _run_without_victim(sql: str, seed: int) -> Outcome:
    engine = _without_victim()
    return run_once(sql, engine.catalog, engine, seed)


def run_once(sql: str, catalog: Catalog, engine: RecordingEngine, seed: int) -> Outcome:
    """prepare + run with `Noise.seeded(seed)` and an unlimited ledger; never raises."""
    engine.last_exact = None
    noise = Noise.seeded(seed)
    plan = None
    try:
        prepared = prepare(sql, catalog, noise)
        plan = prepared.plan
        result = release_of(prepared, engine, noise)
    except InputError as err:
        text = str(err)
        found = RULE.search(text.split(".")[0]) or RULE.search(text)
        return Outcome(rule=found.group(0) if found else None, message=text or "?", plan=plan)
    except BaseException as err:  # noqa: BLE001 - a crash is a finding, not a test error
        if isinstance(err, KeyboardInterrupt):
            raise
        return Outcome(crash=f"{type(err).__name__}: {str(err)[:200]}", plan=plan)
    return Outcome(plan=plan, cross=engine.last_exact, released=result.released.table)


def difference(sql: str, victim: Victim, seed: int = 0) -> Verdict:
    """Run `sql` on D and D' (victim removed) with the same seed and check (a)-(d); the
    neighbours and their engines are built once per victim variant."""
    pair, engine_d = _engines(victim)
    a = run_once(sql, pair.with_victim, engine_d, seed)
    return _verdict(sql, victim, a, _run_without_victim(sql, seed))


def difference_on(sql: str, pair: Neighbours, seed: int = 0) -> Verdict:
    """`difference` on a caller-built pair of catalogues (fresh engines)."""
    engine_d = RecordingEngine(pair.with_victim, timeout_s=ENGINE_TIMEOUT_S)
    engine_n = RecordingEngine(pair.without_victim, timeout_s=ENGINE_TIMEOUT_S)
    a = run_once(sql, pair.with_victim, engine_d, seed)
    b = run_once(sql, pair.without_victim, engine_n, seed)
    return _verdict(sql, pair.victim, a, b)


def _verdict(sql: str, victim: Victim, a: Outcome, b: Outcome) -> Verdict:
    verdict = Verdict(sql, victim, a, b)
    out = verdict.violations
    for name, o in (("D", a), ("D'", b)):
        if o.crash:
            out.append(f"(d) crash on {name}: {o.crash}")
        elif o.rule == INTERNAL_ERROR:
            out.append(f"(d) internal error on {name} (a masked crash): {o.message[:160]}")
        elif o.message and not o.rule:
            out.append(f"(d) refusal on {name} names no DPX rule: {o.message[:160]}")
    if a.label != b.label and POST_PROCESSING_ERROR not in (a.rule, b.rule):
        out.append(
            f"(c) outcome differs: D {a.label} vs D' {b.label} — whether it fails is a released bit"
        )
    if a.cross is not None and b.cross is not None and a.plan is not None:
        out += check_release(a, b)
    return verdict


# ---------------------------------------------------------------- (a) and (b) on a release


def _norm(v) -> object:
    if v is None or v is pd.NA or v is pd.NaT or (isinstance(v, float) and math.isnan(v)):
        return "<NULL>"
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return v if isinstance(v, int | str) else repr(v)


def _keys(frame: pd.DataFrame, n_keys: int) -> list[tuple]:
    cols = [f"k{i}" for i in range(n_keys)]
    return [tuple(_norm(v) for v in row) for row in frame[cols].itertuples(index=False)]


def _by_key(frame: pd.DataFrame, n_keys: int, thresholded: bool) -> dict[tuple, dict]:
    if thresholded and "n_units" in frame:
        frame = frame[frame["n_units"].fillna(0).astype(float) > 0]
    return dict(zip(_keys(frame, n_keys), frame.to_dict("records"), strict=True))


def _number(v) -> int | float:
    if v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v)):
        return 0
    return int(v) if isinstance(v, int | np.integer) else float(v)


def _multiset_gap(x, y) -> int:
    from collections import Counter

    cx = Counter(map(_norm, list(x) if x is not None and not _scalar_na(x) else []))
    cy = Counter(map(_norm, list(y) if y is not None and not _scalar_na(y) else []))
    return sum(((cx - cy) + (cy - cx)).values())


def _scalar_na(v) -> bool:
    return isinstance(v, float) and math.isnan(v)


def check_release(a: Outcome, b: Outcome) -> list[str]:
    """(a) exact stage differences within sensitivity, (b) unique partitions thresholded."""
    plan = a.plan
    q = plan.query
    cu = q.options.max_groups_contributed
    tm = plan.selection
    out: list[str] = []
    mechs = list(plan.statistics) + ([tm] if tm is not None else [])
    for m in mechs:
        if m.max_groups != cu:
            out.append(
                f"(a) mechanism {m.column} calibrated for C_u = {m.max_groups}, query says {cu}"
            )
        if m is tm or m.component == "quantile":
            continue
        if isinstance(m.mechanism, DiscreteGaussian):  # L2: a unit moves C_u partitions by Δ
            if m.mechanism.sensitivity < math.sqrt(cu) * m.sensitivity * (1 - 1e-12):
                out.append(
                    f"(a) {m.mechanism.label}: Gaussian noise calibrated to L2 sensitivity "
                    f"{m.mechanism.sensitivity}, below √C_u·Δ = {math.sqrt(cu) * m.sensitivity}"
                )
        elif m.mechanism.sensitivity < cu * m.sensitivity:
            out.append(
                f"(a) {m.mechanism.label}: noise calibrated to sensitivity "
                f"{m.mechanism.sensitivity}, below C_u·Δ = {cu * m.sensitivity}"
            )
    rows_a = _by_key(a.cross, len(q.keys), tm is not None)
    rows_b = _by_key(b.cross, len(q.keys), tm is not None)
    changed = 0
    squares: dict[int, float] = {}  # Gaussian mechanisms: Σ gap² over partitions (L2)
    for key in rows_a.keys() | rows_b.keys():
        ra, rb = rows_a.get(key, {}), rows_b.get(key, {})
        moved = False
        for i, m in enumerate(mechs):
            col = "n_units" if m is tm else m.column
            if m.component == "quantile":
                gap = _multiset_gap(ra.get(col), rb.get(col))
                bound = q.options.max_rows_per_group
            else:
                gap = abs(_number(ra.get(col)) - _number(rb.get(col)))
                bound = min(m.sensitivity, public_bound(q, m))
                if isinstance(getattr(m, "mechanism", None), DiscreteGaussian):
                    squares[i] = squares.get(i, 0.0) + float(gap) ** 2
            moved |= gap > 0
            if gap > bound:
                out.append(f"(a) partition {key}: {col} changes by {gap} > sensitivity {bound}")
        changed += moved
    for i, total in squares.items():
        l2 = mechs[i].mechanism.sensitivity
        if math.sqrt(total) > l2 * (1 + 1e-9):
            out.append(
                f"(a) {mechs[i].column}: the vector moves by {math.sqrt(total):.6g} in L2 > the "
                f"Gaussian's sensitivity {l2:.6g}"
            )
    if changed > cu:
        out.append(f"(a) {changed} partitions change, but a unit may touch at most C_u = {cu}")
    out += _released_values(a, b)
    only = [k for k in rows_a.keys() ^ rows_b.keys()]
    if only and tm is None:
        out.append(f"(b) PUBLIC_GROUPS key set differs between neighbours: {only[:3]}")
    elif only:
        out += _selection_rate(a, b, set(only))
    return out


def public_bound(query, m) -> float:
    """The per-partition sensitivity of mechanism `m` in integer units (values x 2^exponent)
    derived only from the query's public parameters, independently of the planner: a unit
    changes a unit count by 1; a clamped COUNT/SUM by max(|L|, |U|) per group; an AVG's count
    by 1 and its centred sum by (U - L)/2; a VAR/STDDEV's count and centred sum by k times
    those (per-row bounds, at most k rows per unit and partition). One integer unit is allowed
    for rounding the bound onto the grid. Components without a simple public bound (sums of
    squares) fall back to the planner's own claim."""
    if m.aggregate is None or m.component == "units":
        return 1
    agg = query.aggregates[m.aggregate]
    k = query.options.max_rows_per_group
    low, high = agg.lower, agg.upper
    scale = 2.0**m.exponent
    if agg.kind in (AggKind.COUNT_ROWS, AggKind.COUNT_VALUES, AggKind.SUM):
        real = max(abs(low), abs(high))
    elif agg.kind == AggKind.AVG:
        real = 1 if m.component == "count" else (high - low) / 2
    elif agg.kind in (AggKind.VAR, AggKind.STDDEV) and m.component in ("count", "sum"):
        real = k if m.component == "count" else k * (high - low) / 2
    else:
        return math.inf
    return math.ceil(real * scale) + 1


def _released_values(a: Outcome, b: Outcome) -> list[str]:
    """Same seed, same partitions in the same order => the same noise draws, so released
    COUNT/SUM values differ by exactly the (clamped) stage difference: at most Δ / 2^exp."""
    q = a.plan.query
    n = len(q.keys)
    if _keys(a.cross, n) != _keys(b.cross, n):
        return []
    ra, rb = _by_key(a.released, n, False), _by_key(b.released, n, False)
    bounds = {}
    for m in a.plan.statistics:
        if q.aggregates[m.aggregate].kind in LINEAR_KINDS:
            bounds[m.aggregate] = max(bounds.get(m.aggregate, 0), m.sensitivity / 2.0**m.exponent)
    out = []
    for key in ra.keys() & rb.keys():
        for i, bound in bounds.items():
            gap = abs(_number(ra[key][f"v{i}"]) - _number(rb[key][f"v{i}"]))
            if gap > bound * (1 + 1e-9) + 1e-9:
                out.append(f"(a) released v{i} at {key} moves by {gap:.6g} > {bound:.6g}")
    return out


def allowed_releases(runs: int, delta: float, false_alarm: float = FALSE_ALARM) -> int:
    """The largest count c with P(Binomial(runs, δ) > c) <= false_alarm."""
    p = min(max(delta, 0.0), 1.0)
    tail = 1.0
    for c in range(runs + 1):
        tail -= math.comb(runs, c) * p**c * (1 - p) ** (runs - c)
        if tail <= false_alarm:
            return c
    return runs


def _selection_rate(a: Outcome, b: Outcome, only: set[tuple]) -> list[str]:
    """Release `COPIES` independent copies of each partition that exists in only one
    neighbour (every partition gets its own noise draw, so the copies are independent runs of
    the threshold mechanism) and count how many survive."""
    out: list[str] = []
    delta = a.plan.query.options.delta
    allowed = allowed_releases(COPIES, delta)
    for name, o in (("D", a), ("D'", b)):
        n = len(o.plan.query.keys)
        keys = _keys(o.cross, n)
        rows = o.cross[np.array([k in only for k in keys], dtype=bool)]  # [] would pick columns
        rows = rows[rows["n_units"].fillna(0).astype(float) > 0]
        rows = rows.sort_values("n_units", ascending=False).head(MAX_PARTITIONS_CHECKED)
        for _, row in rows.iterrows():
            copies = pd.DataFrame([row.to_dict()] * COPIES)
            rel = release_module.release(o.plan, copies, Accountant(Noise.seeded(SELECTION_SEED)))
            if rel.partitions_released > allowed:
                key = tuple(_norm(row[f"k{i}"]) for i in range(n))
                out.append(
                    f"(b) partition {key} exists only in {name} and was released in "
                    f"{rel.partitions_released}/{COPIES} runs; δ = {delta:g} allows at most {allowed}"
                )
    return out


__all__ = [
    "Verdict",
    "difference",
    "difference_on",
    "run_once",
    "allowed_releases",
    "neighbours",
    "Victim",
]
