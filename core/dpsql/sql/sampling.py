"""Contribution bounding across partitions: keep at most C_u (unit, partition) rows per unit.

Executed form (DuckDB, and Spark through the same SQL), issue 22:

    keyed     per_user with the salted key _r of each (unit, partition) row
    sampled   SELECT ... FROM keyed QUALIFY ROW_NUMBER() OVER (PARTITION BY _uid ORDER BY _r) <= C_u

The key `_r` (`core.dpsql.sql.sampling_key`) is a 128-bit integer computed from the unit, the
partition's keys and the secret salt only, so which of a unit's partitions survive depends on
nothing else: not on other units' rows, not on the unit's values, not on row order. Ranking by
it samples C_u of the unit's partitions uniformly without replacement (spec §2.5); a unit with
at most C_u partitions keeps them all.

Why this form (measured in docs/benchmarks/scale_sql.md): the sandbox switches off DuckDB's
`top_n_window_elimination` (`core.dpsql.execute.engine.sandbox`), so the window runs as a
partitioned sort, which is cheaper than the per-unit top-n aggregate DuckDB would rewrite it
into and which spills to disk under the memory limit. The earlier form (count the unit's
partitions, key only the units with more than C_u, rank them and semi-join the partials back)
costs more in the spread case than the keys it skips. Exports (`use_hash=False`) rank by
random() instead of the salted key
(DuckDB refuses a volatile expression in a window's ORDER BY, hence the `keyed` stage).

Privacy: this stage is the cross-partition contribution bound; every unit keeps at most C_u of
its own partitions, which is what the mechanisms' sensitivities assume (spec §2.4).
"""

from __future__ import annotations

from sqlglot import exp

from core.dpsql.sql.sampling_key import sampling_key


def _col(name: str) -> exp.Column:
    return exp.column(name)


def sampling_stages(
    nk: int, partials: list[str], cu: int, salt: int, use_hash: bool
) -> list[tuple[str, exp.Select]]:
    """The stages after `per_user` that keep at most `cu` partitions per unit (module doc).

    `nk`: number of group keys (columns k0..k{nk-1}); `partials`: per_user's partial columns;
    `salt`: the 64-bit salt from `Noise`; `use_hash`: the executed form (salted key) rather
    than an export (random())."""
    keys = [_col(f"k{i}") for i in range(nk)]
    key = sampling_key([_col("_uid"), *keys], salt) if use_hash else exp.Rand()
    keyed = exp.select("*", exp.alias_(key, "_r")).from_("per_user")
    rank = exp.Window(
        this=exp.RowNumber(),
        partition_by=[_col("_uid")],
        order=exp.Order(expressions=[exp.Ordered(this=_col("_r"))]),
    )
    names = [f"k{i}" for i in range(nk)] + ["_uid", *partials]
    sampled = exp.select(*[_col(n) for n in names]).from_("keyed")
    sampled.set("qualify", exp.Qualify(this=exp.LTE(this=rank, expression=exp.Literal.number(cu))))
    return [("keyed", keyed), ("sampled", sampled)]
