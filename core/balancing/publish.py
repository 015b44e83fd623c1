"""Phase 3: perturb SA within each sub-table and publish (spec sections 6.2-6.3).

PROJECT DESIGN (the thesis text available to the project does not describe this phase).
Each record keeps its value with probability p_i = a/b exactly (r uniform in {0..b-1}, keep if
r < a), otherwise it gets a uniform value of its sub-table's domain D_i (possibly itself).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd

from core import __version__
from core.balancing.plan import PartitionPlan
from core.balancing.records import EncodedSA, assign_records, encode_sa
from core.balancing.subtables import SubTable
from core.errors import InputError
from core.privacy import Noise

SUBTABLE_COLUMN = "subtable"
SEEDED_MARKER = (
    "SEEDED-demo-not-private"  # in the file name of a publication made with seeded noise
)


def published_name(name: str | Path, noise: Noise) -> Path:
    """The file name for a published CSV: with seeded noise, `SEEDED_MARKER` is inserted before
    the suffix (unless already present) so the file says it is a reproducible demo, not a
    private release (whoever has the seed can undo the randomization)."""
    path = Path(name)
    if noise.is_secure or SEEDED_MARKER in path.name:
        return path
    return path.with_name(f"{path.stem}.{SEEDED_MARKER}{path.suffix or '.csv'}")


STATED_LIMITS = (
    "The guarantee is per record and per single SA' value.",
    "Non-SA' values are not protected by design, because their prior already exceeds rho1.",
    "D_i reveals 'SA is in D_i' for the records of sub-table i.",
)


def frac(x: Fraction | None) -> str | None:
    """Exact JSON form of a Fraction: "a/b", or "n" when whole."""
    if x is None:
        return None
    return str(x.numerator) if x.denominator == 1 else f"{x.numerator}/{x.denominator}"


def perturb_codes(
    codes: np.ndarray,
    sub_ids: np.ndarray,
    subtables: Sequence[SubTable],
    labels: Sequence[str],
    noise: Noise,
) -> np.ndarray:
    """Perturbed value codes; `sub_ids` are 0-based sub-table indices per record (vectorised)."""
    index = {lab: i for i, lab in enumerate(labels)}
    keep_num, keep_den, m, offset, domain = [], [], [], [], []
    for s in subtables:
        if not s.admissible or s.p is None:
            raise ValueError("refusing to perturb an inadmissible sub-table (rho1_i >= rho2)")
        assert s.p + s.m * s.q == 1
        keep_num.append(s.p.numerator)
        keep_den.append(s.p.denominator)
        offset.append(len(domain))
        m.append(s.m)
        domain.extend(index[v] for v in s.counts)  # D_i in canonical order
    keep_num = np.asarray(keep_num, dtype=np.int64)
    keep_den = np.asarray(keep_den, dtype=np.int64)
    m_arr = np.asarray(m, dtype=np.int64)
    offset = np.asarray(offset, dtype=np.int64)
    domain = np.asarray(domain, dtype=np.int64)
    r = noise.integers(keep_den[sub_ids])
    replace = r >= keep_num[sub_ids]
    out = np.asarray(codes, dtype=np.int64).copy()
    rs = sub_ids[replace]
    k = noise.integers(m_arr[rs]) if rs.size else np.zeros(0, dtype=np.int64)
    out[replace] = domain[offset[rs] + k]
    return out


def posterior_check(subtables: Sequence[SubTable], rho2: Fraction) -> list[str]:
    """Section 6.3: the worst-case posterior implied by the p_i, q_i actually used, per sub-table.

    Recomputed from p and q (gamma = (p + q)/q), not read from a stored field, so a plan whose
    retention came from a global gamma (test T8) is caught here.
    """
    problems = []
    for i, s in enumerate(subtables, 1):
        if s.p is None or s.q is None:
            problems.append(f"g{i}: inadmissible (rho1_i = {s.rho1} >= rho2 = {rho2})")
            continue
        gamma = (s.p + s.q) / s.q
        posterior = gamma * s.rho1 / (gamma * s.rho1 + 1 - s.rho1)
        if posterior > rho2:
            problems.append(f"g{i}: worst posterior {posterior} > rho2 = {rho2}")
    return problems


def publishable_subtables(
    plan: PartitionPlan, accept_fallback: bool
) -> tuple[Sequence[SubTable], bool]:
    """The sub-tables to perturb (or the single-table fallback) after the posterior check;
    raises InputError, nothing published, when the plan is refused."""
    subtables = plan.publishable(accept_fallback)
    fallback = subtables is not plan.subtables
    problems = posterior_check(subtables, plan.rho2)
    if problems:
        raise InputError("refusing to publish: " + "; ".join(problems) + ". Nothing was published.")
    if any(s.p.denominator >= 2**63 for s in subtables):
        raise InputError(
            "the exact retention probabilities have denominators beyond 64-bit integers, so they "
            "cannot be sampled exactly. Nothing was published; type rho1 and rho2 with fewer "
            "digits (e.g. 1/3 instead of 0.3333333333333333333)."
        )
    return subtables, fallback


@dataclass
class Publication:
    table: pd.DataFrame  # shuffled rows, SA perturbed, sub-table id column added
    metadata: dict
    subtables: list[SubTable]
    assignment: np.ndarray  # group per original row (audit only, never released)
    encoded: EncodedSA


def subtable_metadata(subtables: Sequence[SubTable]) -> list[dict]:
    return [
        {
            "id": i,
            "size": s.size,
            "domain": list(s.counts),
            "m": s.m,
            "p": frac(s.p),
            "q": frac(s.q),
            "gamma": frac(s.gamma),
        }
        for i, s in enumerate(subtables, 1)
    ]


def publish(
    df: pd.DataFrame,
    sa: str,
    plan: PartitionPlan,
    noise: Noise,
    *,
    accept_fallback: bool = False,
    missing: str = "error",
    drop_columns: Sequence[str] = (),
    record_order: str = "original",
) -> Publication:
    """Perturb and publish `df`; raises InputError (nothing published) if the plan is refused."""
    subtables, fallback = publishable_subtables(plan, accept_fallback)
    encoded = encode_sa(df[sa], missing=missing)
    if encoded.counts() != plan.counts:
        # the p_i were derived for the plan's groups; other data would form other groups whose
        # real rho1_i (and posterior) the plan never checked
        raise InputError(
            f"the SA counts of column '{sa}' do not match the counts the plan was made from. "
            "Nothing was published; plan the partition again from this table (same missing-value "
            "choice)."
        )
    if fallback:
        assignment = np.where(encoded.codes >= 0, 0, -1)
    else:
        groups = [s.counts for s in subtables]
        assignment = assign_records(
            encoded.codes, encoded.labels, groups, noise if record_order == "seeded" else None
        )
    kept = assignment >= 0
    published = perturb_codes(
        encoded.codes[kept], assignment[kept], subtables, encoded.labels, noise
    )
    out = df.loc[kept].drop(columns=list(drop_columns)).copy()
    out[sa] = np.asarray(encoded.labels, dtype=object)[published]
    out[SUBTABLE_COLUMN] = assignment[kept] + 1
    out = out.iloc[noise.permutation(len(out))].reset_index(drop=True)
    metadata = publication_metadata(
        plan, subtables, noise, sa=sa, fallback=fallback, record_order=record_order,
        missing_policy=encoded.missing_policy, drop_columns=drop_columns,
    )  # fmt: skip
    return Publication(
        table=out,
        metadata=metadata,
        subtables=list(subtables),
        assignment=assignment,
        encoded=encoded,
    )


def publication_metadata(
    plan: PartitionPlan,
    subtables: Sequence[SubTable],
    noise: Noise,
    *,
    sa: str,
    fallback: bool,
    record_order: str,
    missing_policy: str,
    drop_columns: Sequence[str],
) -> dict:
    """The metadata file of a publication (in memory or on Spark): parameters, sub-tables, the
    noise mode without its seed."""
    return {
        "software": f"dp-explorer {__version__}",
        "sa_column": sa,
        "subtable_column": SUBTABLE_COLUMN,
        "rho1": frac(plan.rho1),
        "rho2": frac(plan.rho2),
        "sa_prime": plan.sa_prime,
        "canonical_order": plan.canonical,
        "tie_policy": plan.tie_policy,
        "merge_policy": plan.merge_policy,
        "record_order": record_order,
        # the choice only: the number of missing values is an original count (audit artefact)
        "missing_values": {"policy": missing_policy},
        "single_table_fallback": fallback,
        "dropped_columns": list(drop_columns),
        # the seed is never released: it would undo the randomization (spec 6.2)
        "noise": {k: v for k, v in noise.describe().items() if k != "seed"},
        "phase3": "project design: uniform perturbation per sub-table (SDR-style)",
        "stated_limits": list(STATED_LIMITS),
        "subtables": subtable_metadata(subtables),
    }
