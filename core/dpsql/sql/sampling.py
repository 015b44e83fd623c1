"""Contribution bounding across partitions: keep at most C_u (unit, partition) rows per unit.

Executed form (DuckDB, and Spark through the same SQL), issue 11:

    unit_sizes  γ_{_uid} COUNT(*) AS _n             -- partitions per unit
    counted     per_user ⋈ unit_sizes               -- each (unit, partition) row with its _n
    keyed       σ_{_n > C_u} counted + the salted key _r  (only units that must be sampled)
    chosen      the (unit, keys) pairs ranked <= C_u by _r within their unit
    sampled     σ_{_n <= C_u} counted  ∪  (keyed ⋉ chosen)

A unit with at most C_u partitions keeps all of them whatever the key, so it needs neither the
key (an MD5 per pair, the dearest expression of the plan) nor a place in the window sort. The
result is identical to ranking every unit: the key of a pair depends only on (unit, keys,
salt), so the heavy units rank exactly as before, and every light unit's rows pass (their rank
is at most _n <= C_u). Exports (`use_hash=False`) keep the one-window form with random().

Privacy: this stage is the cross-partition contribution bound; every unit keeps at most C_u of
its own partitions, which is what the mechanisms' sensitivities assume (spec §2.4).
"""

from __future__ import annotations

from sqlglot import exp

from core.dpsql.sql.sampling_key import sampling_key


def _col(name: str, table: str | None = None) -> exp.Column:
    return exp.column(name, table=table)


def _rank_within_unit(cu: int) -> exp.Qualify:
    rank = exp.Window(
        this=exp.RowNumber(),
        partition_by=[_col("_uid")],
        order=exp.Order(expressions=[exp.Ordered(this=_col("_r"))]),
    )
    return exp.Qualify(this=exp.LTE(this=rank, expression=exp.Literal.number(cu)))


def sampling_stages(
    nk: int, partials: list[str], cu: int, salt: int, use_hash: bool
) -> list[tuple[str, exp.Select]]:
    """The stages after `per_user` that keep at most `cu` partitions per unit (see module doc).

    `nk`: number of group keys (columns k0..k{nk-1}); `partials`: per_user's partial columns;
    `salt`: the 64-bit salt from `Noise`; `use_hash`: the executed form (salted MD5 key) rather
    than an export (random())."""
    keys = [_col(f"k{i}") for i in range(nk)]
    if not use_hash:
        keyed = exp.select("*", exp.alias_(exp.Rand(), "_r")).from_("per_user")
        sampled = exp.select("*").from_("keyed")
        sampled.set("qualify", _rank_within_unit(cu))
        return [("keyed", keyed), ("sampled", sampled)]

    sizes = (
        exp.select(_col("_uid"), exp.alias_(exp.Count(this=exp.Star()), "_n"))
        .from_("per_user")
        .group_by(_col("_uid"))
    )
    counted = (
        exp.select(
            exp.Column(this=exp.Star(), table=exp.to_identifier("per_user")),
            _col("_n", "unit_sizes"),
        )
        .from_("per_user")
        .join(
            "unit_sizes",
            on=exp.EQ(this=_col("_uid", "per_user"), expression=_col("_uid", "unit_sizes")),
        )
    )
    too_many = exp.GT(this=_col("_n"), expression=exp.Literal.number(cu))
    key = sampling_key([_col("_uid"), *keys], salt)
    keyed = exp.select("*", exp.alias_(key, "_r")).from_("counted").where(too_many)
    # rank only the narrow (unit, keys) pairs, then semi-join the partials back; the null-safe
    # key match keeps exactly the chosen rows
    chosen = exp.select(_col("_uid"), *[k.copy() for k in keys]).from_("keyed")
    chosen.set("qualify", _rank_within_unit(cu))
    on = exp.and_(
        exp.EQ(this=_col("_uid", "keyed"), expression=_col("_uid", "chosen")),
        *[
            exp.NullSafeEQ(this=_col(f"k{i}", "keyed"), expression=_col(f"k{i}", "chosen"))
            for i in range(nk)
        ],
    )
    names = [f"k{i}" for i in range(nk)] + ["_uid", *partials]
    light = (
        exp.select(*[_col(n) for n in names])
        .from_("counted")
        .where(exp.LTE(this=_col("_n"), expression=exp.Literal.number(cu)))
    )
    heavy = (
        exp.select(*[_col(n, "keyed") for n in names])
        .from_("keyed")
        .join("chosen", on=on, join_type="SEMI")
    )
    sampled = exp.select("*").from_(
        exp.Subquery(this=exp.union(light, heavy, distinct=False), alias="_s")
    )
    return [
        ("unit_sizes", sizes),
        ("counted", counted),
        ("keyed", keyed),
        ("chosen", chosen),
        ("sampled", sampled),
    ]
