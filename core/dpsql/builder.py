"""Compose a DP SQL query from widget choices (the page's query builder)."""

from __future__ import annotations

from dataclasses import dataclass

from core.errors import InputError

# the builder's choices (widget labels) and the paper-form call each composes; {x} is the
# column, {L} and {U} the bounds, {uid} the unit column
BUILDER_CALLS = {
    "COUNT(*)": "ANON_COUNT(*, {U})",
    "COUNT(DISTINCT uid)": "COUNT(DISTINCT {uid})",
    "SUM": "ANON_SUM({x}, {L}, {U})",
    "AVG": "ANON_AVG({x}, {L}, {U})",
    "VAR": "ANON_VAR({x}, {L}, {U})",
    "STDDEV": "ANON_STDDEV({x}, {L}, {U})",
    "MEDIAN": "ANON_MEDIAN({x}, {L}, {U})",
}
BUILDER_KINDS = tuple(BUILDER_CALLS)


@dataclass(frozen=True)
class BuilderAggregate:
    kind: str
    column: str | None = None
    lower: float = 0.0
    upper: float = 1.0
    alias: str | None = None


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(float(x))


def _ident(name: str) -> str:
    return name if name.isidentifier() else '"' + name.replace('"', '""') + '"'


def compose(
    from_sql: str,
    keys: list[str],
    aggregates: list[BuilderAggregate],
    epsilon: float,
    delta: float,
    max_groups: int,
    uid: str = "uid",
) -> str:
    """A paper-form query; identifiers are quoted when needed, bounds are literals."""
    if not aggregates:
        raise InputError(
            "DPX-C020 the query builder has no aggregate. Fix: add at least one aggregate "
            "(e.g. COUNT(*))."
        )
    items = [_ident(k) for k in keys]
    for i, a in enumerate(aggregates):
        alias = _ident(a.alias or f"{a.kind.split('(')[0].lower()}_{i + 1}")
        template = BUILDER_CALLS[a.kind]
        if "{x}" in template and not a.column:
            raise InputError(
                f"DPX-C021 {a.kind} in the query builder has no column. Fix: choose the "
                "column it aggregates."
            )
        call = template.format(
            x=_ident(a.column or ""), L=_num(a.lower), U=_num(a.upper), uid=_ident(uid)
        )
        items.append(f"{call} AS {alias}")
    sql = (
        f"SELECT WITH ANONYMIZATION OPTIONS (epsilon = {_num(epsilon)}, delta = {delta:g}, "
        f"max_groups_contributed = {int(max_groups)})\n  "
        + ",\n  ".join(items)
        + f"\nFROM {from_sql}"
    )
    if keys:
        sql += "\nGROUP BY " + ", ".join(_ident(k) for k in keys)
    return sql


def from_options(private: list[str], uid: str) -> list[str]:
    """Each private table alone, and each pair joined on the privacy unit."""
    out = list(private)
    for i, a in enumerate(private):
        for b in private[i + 1 :]:
            out.append(f"{a} JOIN {b} USING ({_ident(uid)})")
    return out
