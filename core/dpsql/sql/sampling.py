"""Contribution bounding across partitions: keep at most C_u (unit, partition) rows per unit.

Executed form (DuckDB, and Spark through the same SQL), issues 22 and 30:

    part_keys   one row per distinct partition with its two salted MD5 words (_pa, _pb)
    unit_keyed  per_user joined to part_keys on the keys (NULL-safe), with the unit's word _x
    keyed       the pair's 63-bit key _r = mix(_x, _pa, _pb)
    sampled     SELECT ... FROM keyed QUALIFY ROW_NUMBER() OVER (PARTITION BY _uid ORDER BY _r) <= C_u

The key `_r` (`core.dpsql.sql.partition_key`) is computed from the unit, the partition's keys
and the secret salt only, so which of a unit's partitions survive depends on nothing else: not
on other units' rows, not on the unit's values, not on row order. Ranking by it samples C_u of
the unit's partitions uniformly without replacement (spec §2.5); a unit with at most C_u
partitions keeps them all. MD5 runs once per distinct partition (in `part_keys`, a GROUP BY of
per_user by the keys; DuckDB materialises per_user, which both stages read), and the per-pair
work is integer arithmetic, which both engines compute alike. A query without GROUP BY keys has
one partition: no `part_keys`, constant partition words.

Why a window (measured in docs/benchmarks/scale_sql.md and dpsql.md): the sandbox switches off
DuckDB's `top_n_window_elimination` (`core.dpsql.execute.engine.sandbox`), so the window runs as
a partitioned sort, which is cheaper than the per-unit top-n aggregate DuckDB would rewrite it
into and which spills to disk under the memory limit; for C_u = 1 a grouped `arg_min` over the
pairs was slower still (issue 30). Exports (`use_hash=False`) rank by random() instead of the
salted key (DuckDB refuses a volatile expression in a window's ORDER BY, hence the `keyed`
stage).

Privacy: this stage is the cross-partition contribution bound; every unit keeps at most C_u of
its own partitions (one row per partition: the join adds no row, since part_keys has one row
per distinct key under the same equality), which is what the mechanisms' sensitivities assume
(spec §2.4).
"""

from __future__ import annotations

from sqlglot import exp

from core.dpsql.sql.partition_key import (
    WORDS,
    key_layers,
    layered,
    partition_words,
    unit_layers,
)


def _col(name: str, table: str | None = None) -> exp.Column:
    return exp.column(name, table=table)


def _sampled(names: list[str], cu: int) -> exp.Select:
    rank = exp.Window(
        this=exp.RowNumber(),
        partition_by=[_col("_uid")],
        order=exp.Order(expressions=[exp.Ordered(this=_col("_r"))]),
    )
    sampled = exp.select(*[_col(n) for n in names]).from_("keyed")
    sampled.set("qualify", exp.Qualify(this=exp.LTE(this=rank, expression=exp.Literal.number(cu))))
    return sampled


def sampling_stages(
    nk: int,
    partials: list[str],
    cu: int,
    salt: int,
    use_hash: bool,
    integer_unit: bool = False,
) -> list[tuple[str, exp.Select]]:
    """The stages after `per_user` that keep at most `cu` partitions per unit (module doc).

    `nk`: number of group keys (columns k0..k{nk-1}); `partials`: per_user's partial columns;
    `salt`: the 64-bit salt from `Noise`; `use_hash`: the executed form (salted key) rather
    than an export (random()); `integer_unit`: the unit is a BIGINT whose bits the key mixes
    (`core.dpsql.plan.planner.integer_unit`), otherwise its text is hashed."""
    names = [f"k{i}" for i in range(nk)] + ["_uid", *partials]
    if not use_hash:
        keyed = exp.select("*", exp.alias_(exp.Rand(), "_r")).from_("per_user")
        return [("keyed", keyed), ("sampled", _sampled(names, cu))]
    stages: list[tuple[str, exp.Select]] = []
    base = [_col(n, "per_user") for n in names]
    if nk:
        keys = [_col(f"k{i}") for i in range(nk)]
        words = [exp.alias_(w, n) for w, n in zip(partition_words(keys, salt), WORDS, strict=True)]
        part_keys = exp.select(*[k.copy() for k in keys], *words).from_("per_user")
        stages.append(("part_keys", part_keys.group_by(*[k.copy() for k in keys])))
        on = exp.and_(
            *[
                exp.NullSafeEQ(this=_col(f"k{i}", "per_user"), expression=_col(f"k{i}", "pk"))
                for i in range(nk)
            ]
        )
        pk = exp.Table(
            this=exp.to_identifier("part_keys"), alias=exp.TableAlias(this=exp.to_identifier("pk"))
        )
        joined = (
            exp.select(*base, *[_col(w, "pk") for w in WORDS])
            .from_("per_user")
            .join(pk, on=on, join_type="INNER")
        )
        pa, pb = _col(WORDS[0]), _col(WORDS[1])
        carried = [*names, *WORDS]
    else:
        joined = exp.select(*base).from_("per_user")
        pa, pb = partition_words([], salt)
        carried = list(names)
    layers = unit_layers(_col("_uid"), integer_unit, salt)
    unit_keyed = layered(joined, layers, [*[_col(n) for n in carried], _col("_x")])
    stages.append(("unit_keyed", unit_keyed))
    keyed = layered(exp.select("*").from_("unit_keyed"), key_layers(pa, pb, salt),
                    [*[_col(n) for n in names], _col("_r")])  # fmt: skip
    stages.append(("keyed", keyed))
    stages.append(("sampled", _sampled(names, cu)))
    return stages
