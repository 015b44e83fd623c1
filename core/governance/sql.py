"""The one governance request of a DP SQL release, built from its `Prepared` query (issue 28).

The app and the CLI both call `sql_request`: the cost is the prepared query's (composed from the
mechanisms that will draw), the claim's unit follows from the catalogue the query was checked
against (`sql_unit`), and a failure after the charge carries DP SQL's code (DPX-E009) on every
front door. Nothing else assembles a DP SQL request.
"""

from __future__ import annotations

from collections.abc import Callable

from core.dpsql.catalog import Catalog, UnitSource
from core.dpsql.service import Prepared
from core.governance.flow import Request
from core.governance.origin import Origin
from core.governance.roles import Role
from core.privacy import Noise, PrivacyUnit
from core.registry import Claim, Dataset, Tool

FAILED_AFTER_CHARGE = "DPX-E009"


def sql_unit(catalog: Catalog) -> PrivacyUnit:
    """Whom a query on `catalog` protects: each row when the private tables' rows are units,
    else the person named by their unit column (one column for the whole catalogue)."""
    private = [t for t in catalog.tables() if t.private]
    if private and all(t.unit_source is UnitSource.ROW for t in private):
        return PrivacyUnit.row_is_person()
    columns = sorted({t.uid for t in private if t.uid and t.unit_source is UnitSource.COLUMN})
    return PrivacyUnit.person(columns[0]) if columns else PrivacyUnit.record()


def sql_request(
    prepared: Prepared,
    *,
    role: Role,
    dataset: Dataset | None,
    noise: Noise,
    door: Origin,
    extra_checks: tuple[Callable[[], None], ...] = (),
) -> Request:
    """The governed request of one DP SQL release. Privacy claim: (ε, δ) = `prepared.cost`,
    the composition of `prepared.mechanisms`, at the level of `sql_unit(prepared.catalog)`.
    Recorded: the query as prepared, beside the `door` it came through."""
    return Request(
        tool=Tool.SQL.value,
        role=role,
        dataset=dataset,
        params=door.around({"query": prepared.query.text}),
        cost=prepared.cost,
        claim=Claim.of(sql_unit(prepared.catalog)),
        noise=noise,
        extra_checks=extra_checks,
        error_code=FAILED_AFTER_CHARGE,
    )
