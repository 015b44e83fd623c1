"""The record a DP SQL release leaves in the registry: typed, public by construction (the query
as run, its options, the released rows with their 95 % noise-only intervals, the threshold as
released, the unit column). Built from the `QueryResult`; reports, the Releases page and the
CLI's analyst output read it back with `SqlArtefact.from_json`."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from core.dpsql.jsonsafe import jsonable


@dataclass(frozen=True)
class ThresholdView:
    """Partition selection as released: integer threshold T on a unit count noised at `scale`."""

    threshold: int
    scale: float
    epsilon: float
    delta: float


@dataclass(frozen=True)
class SqlArtefact:
    """Released rows of a DP SQL query with 95 % noise-only intervals per released number."""

    query: str
    unit_column: str | None
    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]
    intervals: dict[str, list[list[float | None]]]
    threshold: ThresholdView | None
    options: dict
    tool: str = field(default="sql", init=False)

    def to_json(self) -> dict:
        return jsonable(asdict(self))

    @classmethod
    def from_json(cls, data: dict) -> SqlArtefact:
        th = data.get("threshold")
        return cls(
            query=data["query"],
            unit_column=data.get("unit_column"),
            columns=tuple(data["columns"]),
            rows=tuple(tuple(r) for r in data["rows"]),
            intervals=data.get("intervals", {}),
            threshold=None if th is None else ThresholdView(**th),
            options=data.get("options", {}),
        )


def sql_artefact(result, unit_column: str | None) -> SqlArtefact:
    """The record of a `service.QueryResult` (released values and public parameters only)."""
    out = result.to_dict()
    th = out["threshold"]
    record = out["query_record"]
    threshold = None
    if th.get("integer") is not None:
        threshold = ThresholdView(
            int(th["integer"]), float(th["scale"]), th["epsilon"], th["delta"]
        )
    return SqlArtefact(
        query=record["query"],
        unit_column=unit_column,
        columns=tuple(out["columns"]),
        rows=tuple(tuple(r) for r in out["rows"]),
        intervals=out["intervals95"],
        threshold=threshold,
        options={
            k: record.get(k)
            for k in ("epsilon", "delta", "max_groups_contributed", "max_rows_per_group", "form")
        },
    )
