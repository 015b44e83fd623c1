"""Phase 3 of a PP release: plan from noisy counts, rows, perturbation, the published table and
its metadata (spec sections 6.2-6.3, with the covered plan of `core.balancing.release`).

PROJECT DESIGN (the thesis text available to the project does not describe this phase). Each
row keeps its value with probability p_i = a/b exactly (r uniform in {0..b-1}, keep if r < a),
otherwise it gets a uniform value of its sub-table's domain D_i (possibly itself).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from core import __version__
from core.balancing.assign import Slots, draw_record_subtables, perturb, slot_rows
from core.balancing.colspec import Kind, OutColumn, column_spec, declared_cells, header
from core.balancing.csv_out import write_table_csv
from core.balancing.names import (
    SEEDED_MARKER,
    SEEDED_VALUE,
    STATED_LIMITS,
    SUBTABLE_COLUMN,
    frac,
)
from core.balancing.persons import ONE_RECORD_PER_PERSON, one_record_per_person, unit_words
from core.balancing.records import MISSING_LABEL, encode_sa
from core.balancing.release import (
    PLAN_UNIT,
    ReleasePlan,
    ReleaseSettings,
    plan_epsilon_within_claim,
    posterior_after_plan,
    release_plan,
)
from core.errors import InputError
from core.privacy import Accountant, Noise

ROWS_FROM_SLOTS = "plan slots"  # SA only: one row per planned slot, no record read
ROWS_FROM_RECORDS = "records"  # SA + declared columns: one row per record


@dataclass
class Publication:
    table: pd.DataFrame  # shuffled rows: published columns, SA perturbed, sub-table id added
    metadata: dict
    release: ReleasePlan  # the plan on noisy counts (publishable: it is ε-DP)
    columns: list[str]  # the published columns of the input table (SA + declared)
    assignment: np.ndarray | None  # sub-table per input row (-1: not published); audit only
    seeded: bool

    @property
    def sa(self) -> str:
        return self.metadata["sa_column"]

    def csv(self) -> str:
        """The published CSV. A seeded publication says so in its header: a first column named
        `SEEDED_MARKER` (and its file name, `published_name`)."""
        table = self.table
        if self.seeded:
            table = table.copy()
            table.insert(0, SEEDED_MARKER, SEEDED_VALUE)
        return table.to_csv(index=False)

    def write_csv(self, path) -> None:
        """Write `csv()`'s text to `path` in bulk (core.balancing.csv_out): the same bytes."""
        table = self.table
        if self.seeded:
            table = table.copy()
            table.insert(0, SEEDED_MARKER, SEEDED_VALUE)
        write_table_csv(table, path)


def _cells(column: OutColumn, rows: pd.DataFrame | None, perturbed, group: np.ndarray):
    """One published column's cells, as `core.balancing.colspec` says it is written."""
    if column.kind is Kind.SA:
        return perturbed
    if column.kind is Kind.SUBTABLE:
        return group + 1
    return declared_cells(rows[column.name])  # Kind.DECLARED (the marker: files only)


def publish(
    df: pd.DataFrame,
    sa: str,
    columns: Sequence[str],
    settings: ReleaseSettings,
    accountant: Accountant,
    unit: str | None = None,
) -> Publication:
    """Publish `df` as a PP release; raises InputError (nothing published) on a refusal.

    `unit`: the dataset's person column, if its rows are not one per person: each person is
    reduced to one record first (`core.balancing.persons`), so every claim below holds per
    person; the unit column is never published.

    `columns` are the published columns (from `core.balancing.columns.published_columns`: the
    SA plus the owner's declared columns). `accountant` is the release's: charged
    `settings.cost` (the plan's ε) with claim `settings.claim`.

    Privacy claim ((ρ1, ρ2) per record) + (ε for the plan, unit: one record's SA value):
    the plan is drawn through `settings.plan_mechanism` (discrete Laplace, sensitivity 2,
    scale 2/ε) and every row through the sub-tables' `PPRandomization` objects (see
    `core.balancing.release` for why the published partition is covered). With the SA alone,
    the rows are the plan's slots and the whole publication is ε-DP."""
    columns = [str(c) for c in columns]
    if sa not in columns or len(set(columns)) != len(columns) or (unit and unit in columns):
        raise ValueError("columns must list the SA once and never the unit (columns.py)")
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise InputError(f"column '{missing[0]}' not found. Columns: {', '.join(map(str, df))}.")
    df = one_record_per_person(df, unit, accountant.noise)
    encoded = encode_sa(df[sa], missing=settings.missing)
    plan = release_plan(encoded.counts(), settings, accountant)
    slots = Slots.of(plan.subtables)
    from_records = columns != [sa]
    if from_records:
        kept = encoded.codes >= 0
        value_index = slots.codes_of(encoded.labels)[encoded.codes[kept]]
        group, local = draw_record_subtables(value_index, slots, accountant, plan.mechanisms[0])
        rows = df.loc[kept, columns].reset_index(drop=True)
        assignment = np.full(len(df), -1, dtype=np.int64)
        assignment[kept] = group
    else:
        group, local = slot_rows(slots)
        rows = None
        assignment = None
    perturbed = perturb(accountant, plan.mechanisms, slots, group, local)
    out = pd.DataFrame(
        {c.name: _cells(c, rows, perturbed, group) for c in column_spec(sa, columns, False)},
        index=pd.RangeIndex(group.size),
    )
    noise = accountant.noise
    out = out.iloc[noise.permutation(len(out))].reset_index(drop=True)
    metadata = publication_metadata(
        plan,
        settings,
        accountant,
        sa=sa,
        columns=columns,
        rows_from=ROWS_FROM_RECORDS if from_records else ROWS_FROM_SLOTS,
        missing_policy=encoded.missing_policy,
        unit=unit,
    )
    return Publication(
        table=out,
        metadata=metadata,
        release=plan,
        columns=columns,
        assignment=assignment,
        seeded=not noise.is_secure,
    )


def subtable_metadata(plan: ReleasePlan) -> list[dict]:
    return [
        {
            "id": i,
            "size": s.size,  # the planned size (noisy); with records, rows per id may differ
            "domain": list(s.counts),
            "m": s.m,
            "rho1_i": frac(s.rho1),
            "p": frac(s.p),
            "q": frac(s.q),
            "gamma": frac(s.gamma),
            "retention": frac(s.p),
            "posterior_bound": frac(m.posterior_bound),
            "mechanism": m.label,
        }
        for i, (s, m) in enumerate(zip(plan.subtables, plan.mechanisms, strict=True), 1)
    ]


def privacy_statement(settings: ReleaseSettings, rows_from: str) -> list[str]:
    """The release's claim in sentences (metadata, CLI, pages, reports)."""
    eps = settings.plan_epsilon
    delta = settings.cost.delta
    at_rho1 = posterior_after_plan(settings.rho1, eps)
    select = settings.selection_mechanism
    lines = [
        f"(rho1, rho2) = ({settings.rho1}, {settings.rho2}) per record: a belief of at most "
        "rho1 in a protected value (the plan's frequency in the record's sub-table) rises to at "
        "most rho2 from the record's published value.",
        f"epsilon = {eps:g}, delta = {delta:.2g} for the partition plan (discrete Laplace on "
        f"the value counts, sensitivity 2, unit: {PLAN_UNIT}): sub-table sizes, domains, "
        "canonical order and retention probabilities are computed from noisy counts only.",
        "The SA values were declared by the data owner (delta = 0)."
        if select is None
        else f"The SA values are read from the data and listed only when their noisy count "
        f"reaches {select.threshold} (a value held by one record is listed with probability at "
        f"most delta = {select.delta:.2g}).",
    ]
    if rows_from == ROWS_FROM_SLOTS:
        lines.append(
            "Only the sensitive attribute is published: the rows are the plan's slots, so the "
            "whole publication is (epsilon, delta)-DP; a prior of rho1 rises to at most "
            f"{at_rho1:.3f} "
            f"(at most rho2 while epsilon <= ln gamma = "
            f"{plan_epsilon_within_claim(settings.rho1, settings.rho2):.3f})."
        )
    else:
        lines.append(
            "Declared columns are published unchanged: every record's row is published, drawn "
            "into a sub-table on its own from the plan; the plan and all other rows tell at most "
            "a factor e^epsilon about a record's value, its own row the (rho1, rho2) above."
        )
    return lines


def publication_metadata(
    plan: ReleasePlan,
    settings: ReleaseSettings,
    accountant: Accountant,
    *,
    sa: str,
    columns: Sequence[str],
    rows_from: str,
    missing_policy: str,
    unit: str | None = None,
) -> dict:
    """The metadata file of a publication (in memory or on Spark): the claim and the mechanisms
    that drew, the published plan (noisy), the noise mode without its seed."""
    p = plan.plan
    noise: Noise = accountant.noise
    select = settings.selection_mechanism
    return {
        "software": f"dp-explorer {__version__}",
        "sa_column": sa,
        "subtable_column": SUBTABLE_COLUMN,
        "published_columns": header(column_spec(sa, columns, False), files=False),
        "rows": rows_from,
        "privacy": {
            "rho1": frac(settings.rho1),
            "rho2": frac(settings.rho2),
            "plan_epsilon": settings.plan_epsilon,
            "plan_delta": settings.cost.delta,
            "plan_unit": PLAN_UNIT if unit is None else "one person's SA value (one record each)",
            "unit": unit_words(unit),
            "statement": privacy_statement(settings, rows_from)
            + (
                []
                if unit is None
                else [f"Unit: each person (column {unit}); {ONE_RECORD_PER_PERSON}."]
            ),
            "mechanisms": [m.to_json() for m in accountant.mechanisms],
        },
        "rho1": frac(settings.rho1),
        "rho2": frac(settings.rho2),
        "categories": {
            "source": plan.categories_source,
            "values": list(plan.noisy_counts),
            "threshold": None if select is None else select.threshold,
        },
        "plan_counts": dict(plan.noisy_counts),  # noisy (ε-DP), what the plan was made from
        "sa_prime": list(p.sa_prime),
        "canonical_order": list(p.canonical),
        "tie_policy": p.tie_policy,
        "merge_policy": p.merge_policy,
        # the choice and the one spelling; the number of missing values is not published
        "missing_values": {"policy": missing_policy, "label": MISSING_LABEL},
        "single_table_fallback": plan.fallback,
        # the seed is never released: it would undo the randomization (spec 6.2)
        "noise": {k: v for k, v in noise.describe().items() if k != "seed"},
        "phase3": "project design: uniform perturbation per sub-table (SDR-style)",
        "stated_limits": list(STATED_LIMITS),
        "subtables": subtable_metadata(plan),
    }
