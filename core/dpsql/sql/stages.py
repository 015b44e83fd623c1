"""Rewrite a validated DP query into staged SQL (one CTE per stage; spec §2.3-§2.6, §4.2).

src -> per_user (one row per unit and partition) -> keyed/sampled (at most C_u partitions per
unit) -> clamped (bounds, NULL-safe, integerised) -> cross_user (exact per-partition sums and
the distinct-unit count). Noise, thresholding and post-processing happen in Python
(`core.dpsql.release.noise`), never in SQL.

Sampling key: DuckDB rejects a volatile `ORDER BY random()` in a window, and every random draw
must go through `Noise`, so the executed SQL materialises a salted key of (_uid, keys...)
(`core.dpsql.sql.partition_key`: the same on DuckDB and Spark) with a 62-bit salt drawn from
the `Noise` object: a fresh salt gives a fresh pseudo-random choice of
C_u partitions per unit. The choice only affects bias, never the privacy guarantee (any rule
picking <= C_u of a unit's own partitions bounds its influence). Exports to other engines
(`StagedSQL.sql(dialect)`) materialise `random()` instead, which every target supports.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from core.dpsql.check.allowlist import totalise
from core.dpsql.parse.ir import DPQuery
from core.dpsql.plan.planner import Plan
from core.dpsql.sql.expressions import DIALECTS, SqlTarget, col
from core.dpsql.sql.postgres import round_half_away
from core.dpsql.sql.row_caps import cap_private_tables
from core.dpsql.sql.sampling import sampling_stages
from core.dpsql.sql.sampling_key import sampling_key

STAGE_CAPTIONS = {
    "src": "π σ ⋈ — the validated FROM/WHERE; the privacy unit is propagated as _uid",
    "rows_keyed": "row sample key (for per-row aggregates: at most k rows per unit and group)",
    "rows_ranked": "ROW_NUMBER per (_uid, keys, value IS NULL) by the row key",
    "per_user": "γ_{keys, _uid} — one row per unit and partition with the partial aggregates",
    "part_keys": "each distinct partition with two words of its salted MD5 (once per partition)",
    "unit_keyed": "the (unit, partition) rows with their partition's words and the unit's word",
    "keyed": "the salted random key _r of each (unit, partition) row",
    "sampled": "Sample_{uid, C_u} — keep at most C_u partitions per unit",
    "clamped": "partials clamped to [L, U] (NULL stays NULL) and integerised (× 2^j)",
    "cross_user": "γ_{keys} — exact per-partition sums and unit count (NON-PRIVATE, noised next)",
    "public_keys": "PUBLIC_GROUPS: the distinct keys of the public table",
    "public_groups": "every public key, left-joined to cross_user (empty groups are pure noise)",
}


@dataclass
class StagedSQL:
    """The plan as SQL: one CTE per stage, ending in `cross_user` (or `public_groups`)."""

    plan: Plan
    stages: list[tuple[str, exp.Select]]  # the executed DuckDB form (salted sampling key)
    relation: exp.Select  # the executed FROM/JOINs/CTEs (private tables capped when joined)

    @property
    def query(self) -> DPQuery:
        return self.plan.query

    def sql(self, dialect: str = "duckdb", executable: bool = False, pretty: bool = True) -> str:
        """The staged query in `dialect`. Exports use random(); execution uses the salted hash."""
        if dialect not in DIALECTS:
            raise ValueError(f"dialect must be one of {', '.join(DIALECTS)}")
        if executable:
            stages, relation = self.stages, self.relation
        else:
            target = SqlTarget(dialect, False, self.plan.query.options.max_rows_per_group)
            relation = executed_relation(self.plan, target)
            stages = build_stages(self.plan, target, relation)
        tree = assemble(relation, stages, total=executable)
        if dialect == "postgres":  # PostgreSQL rounds halves to even: see postgres.py
            tree = round_half_away(tree)
        return tree.sql(dialect=dialect, pretty=pretty)

    def stage_sql(self, name: str, limit: int | None = None) -> str:
        """Executable DuckDB SQL that selects one stage (for the teaching inspector)."""
        names = [n for n, _ in self.stages]
        upto = self.stages[: names.index(name) + 1]
        final = exp.select("*").from_(name)
        if limit is not None:
            final = final.limit(limit)
        return assemble(self.relation, upto, final, total=True).sql(dialect="duckdb")


def stage(plan: Plan) -> StagedSQL:
    """The executed staged SQL of `plan` (DuckDB; Spark runs the same text, see to_spark_sql)."""
    target = SqlTarget("duckdb", True, plan.query.options.max_rows_per_group)
    relation = executed_relation(plan, target)
    return StagedSQL(plan, build_stages(plan, target, relation), relation)


def executed_relation(plan: Plan, target: SqlTarget) -> exp.Select:
    """The query's FROM, JOINs and CTEs as they run: private tables capped in rows per unit
    when the query joins private relations (`core.dpsql.sql.row_caps`)."""
    return cap_private_tables(plan.query.relation.copy(), plan.row_caps, target, plan.salt + 2)


def _random_key(target: SqlTarget, parts: list[exp.Expression], salt: int) -> exp.Expression:
    if target.executable:
        return sampling_key(parts, salt)  # same key on DuckDB and Spark (issue 11)
    return exp.Rand()


def _uid_expression(plan: Plan) -> exp.Expression:
    uid_cols = [col(s.uid, s.alias) for s in plan.sources if s.private]
    joins = plan.query.relation.args.get("joins") or []
    sides = {(j.args.get("side") or "").upper() for j in joins}
    if not sides & {"FULL", "RIGHT"}:
        uid_cols = uid_cols[:1]  # inner/left joins on the unit: the first private side suffices
    if len(uid_cols) == 1:
        return uid_cols[0]
    return exp.Coalesce(this=uid_cols[0], expressions=uid_cols[1:])


def _unit_present() -> exp.Expression:
    """COUNT(_uid) > 0: the executed per_user's test that a group has a unit (issue 27).

    `_uid` is a grouping key, so a group's `_uid` is either one value (count >= 1) or NULL
    (count 0): keeping the groups with COUNT(_uid) > 0 keeps exactly the groups that
    `WHERE _uid IS NOT NULL` keeps, with the same rows. The difference is where it runs: DuckDB
    pushes a WHERE on `_uid` through a declared table's view down to the file's scan, where the
    unit column is still text, and then converts that column twice per row (once for the
    filter, once for the value; ~2 CPU-s of 50M CSV rows). A test on an aggregate is never
    pushed below the aggregation, so each value is converted once. The NULL-unit rows it lets
    into the aggregation form at most one group per partition and are dropped here; every
    executed partial is total (counts, sums and averages of doubles), so they cannot make the
    query fail. Exports keep the plain WHERE; so does the row-level path (its window must not
    rank rows without a unit)."""
    return exp.GT(this=exp.Count(this=col("_uid")), expression=exp.Literal.number(0))


def build_stages(
    plan: Plan, target: SqlTarget, relation: exp.Select
) -> list[tuple[str, exp.Select]]:
    q = plan.query
    nk = len(q.keys)
    keys = [col(f"k{i}") for i in range(nk)]
    stages: list[tuple[str, exp.Select]] = []

    # src: project _uid, keys and aggregate arguments from the validated relation
    src = relation.copy()
    src.set("with_", None)
    projections = [exp.alias_(_uid_expression(plan), "_uid")]
    projections += [exp.alias_(k.copy(), f"k{i}") for i, k in enumerate(q.keys)]
    # one src column per distinct argument expression: a<i> names the first aggregate using it
    arg_col: dict[int, str] = {}
    first: dict[str, str] = {}
    for i, a in enumerate(q.aggregates):
        if a.arg is None:
            continue
        text = a.arg.sql(dialect="duckdb")
        if text not in first:
            first[text] = f"a{i}"
            projections.append(exp.alias_(a.arg.copy(), f"a{i}"))
        arg_col[i] = first[text]
    src.set("expressions", projections)
    if q.where is not None:
        src.set("where", exp.Where(this=q.where.copy()))
    stages.append(("src", totalise(src) if target.executable else src))

    # row-level aggregates keep at most k rows per unit and partition: rank them first
    row_cols = sorted({arg_col[a.index] for a in plan.aggregates if a.ROW_LEVEL})
    per_user_from = "src"
    if row_cols:
        parts = [col("_uid"), *keys, *[col(c) for c in row_cols]]
        key = _random_key(target, parts, plan.salt + 1)
        stages.append(("rows_keyed", exp.select("*", exp.alias_(key, "_rr")).from_("src")))
        ranks = [
            exp.alias_(
                exp.Window(
                    this=exp.RowNumber(),
                    partition_by=[
                        col("_uid"),
                        *[k.copy() for k in keys],
                        exp.Paren(this=exp.Is(this=col(c), expression=exp.Null())),
                    ],
                    order=exp.Order(expressions=[exp.Ordered(this=col("_rr"))]),
                ),
                f"rn_{c}",
            )
            for c in row_cols
        ]
        stages.append(("rows_ranked", exp.select("*", *ranks).from_("rows_keyed")))
        per_user_from = "rows_ranked"

    # per_user: one row per (keys, unit) with each aggregate's partials
    partials: list[exp.Expression] = []
    for a in plan.aggregates:
        arg = col(arg_col.get(a.index, f"a{a.index}"))
        partials += a.per_unit(arg, target)
    per_user = exp.select(*keys, col("_uid"), *partials).from_(per_user_from)
    per_user = per_user.group_by(*[k.copy() for k in keys], col("_uid"))
    if target.executable and per_user_from == "src":
        per_user = per_user.having(_unit_present())
    else:
        per_user = per_user.where(exp.Not(this=exp.Is(this=col("_uid"), expression=exp.Null())))
    stages.append(("per_user", per_user))

    # at most C_u partitions per unit (core.dpsql.sql.sampling: ranked within the unit by the key)
    cu = q.options.max_groups_contributed
    stages += sampling_stages(
        nk, [p.alias for p in partials], cu, plan.salt, target.executable, plan.integer_unit
    )

    # clamped: NULL-preserving clamp of per-group partials, integerised by 2^j
    clamped = [e for a in plan.aggregates for e in a.clamped(target)]
    stages.append(("clamped", exp.select(*keys, col("_uid"), *clamped).from_("sampled")))

    # cross_user: exact aggregates per partition; each (unit, partition) row is unique here
    outs: list[exp.Expression] = [exp.alias_(exp.Count(this=exp.Star()), "n_units")]
    outs += [e for a in plan.aggregates for e in a.cross_unit(target)]
    cross = exp.select(*keys, *outs).from_("clamped")
    if keys:
        cross = cross.group_by(*[k.copy() for k in keys])
    stages.append(("cross_user", cross))
    if plan.public_source is not None:
        stages += _public_group_stages(plan, [o.alias for o in outs])
    return stages


def _public_group_stages(plan: Plan, stat_names: list[str]) -> list[tuple[str, exp.Select]]:
    """PUBLIC_GROUPS: every distinct key of the public table, left-joined to cross_user."""
    src = plan.public_source
    nk = len(plan.query.keys)
    table = exp.Table(
        this=exp.to_identifier(src.table), alias=exp.TableAlias(this=exp.to_identifier(src.alias))
    )
    keys = (
        exp.select(
            *[
                exp.alias_(exp.column(k.name, table=src.alias), f"k{i}")
                for i, k in enumerate(plan.query.keys)
            ]
        )
        .from_(table)
        .distinct()
    )
    on = exp.and_(
        *[exp.NullSafeEQ(this=col(f"k{i}", "pk"), expression=col(f"k{i}", "cu")) for i in range(nk)]
    )
    joined = (
        exp.select(*[col(f"k{i}", "pk") for i in range(nk)], *[col(n, "cu") for n in stat_names])
        .from_(
            exp.Table(
                this=exp.to_identifier("public_keys"),
                alias=exp.TableAlias(this=exp.to_identifier("pk")),
            )
        )
        .join(
            exp.Table(
                this=exp.to_identifier("cross_user"),
                alias=exp.TableAlias(this=exp.to_identifier("cu")),
            ),
            on=on,
            join_type="LEFT",
        )
    )
    return [("public_keys", keys), ("public_groups", joined)]


def assemble(
    relation: exp.Select,
    stages: list[tuple[str, exp.Select]],
    final: exp.Select | None = None,
    total: bool = False,
) -> exp.Select:
    """WITH <user CTEs>, <stages> SELECT * FROM <last stage>; `total`: the executed form, with
    the user's CTEs totalised like `src` (DuckDB's TRY)."""
    last = stages[-1][0]
    out = (final or exp.select("*").from_(last)).copy()
    user = relation.args.get("with_")
    ctes = [totalise(c) if total else c.copy() for c in user.expressions] if user else []
    ctes += [
        exp.CTE(this=s.copy(), alias=exp.TableAlias(this=exp.to_identifier(n))) for n, s in stages
    ]
    out.set("with_", exp.With(expressions=ctes))
    return out
