"""Rewrite a validated DP query into staged SQL (one CTE per stage; spec §2.3-§2.6, §4.2).

src -> per_user (one row per unit and partition) -> keyed/sampled (at most C_u partitions per
unit) -> clamped (bounds, NULL-safe, integerised) -> cross_user (exact per-partition sums and
the distinct-unit count). Noise, thresholding and post-processing happen in Python
(`core.dpsql.release`), never in SQL.

Sampling key: DuckDB rejects a volatile `ORDER BY random()` in a window, and every random draw
must go through `Noise`, so the executed SQL materialises `hash(_uid, keys..., salt)` with a
64-bit salt drawn from the `Noise` object: a fresh salt gives a fresh pseudo-random choice of
C_u partitions per unit. The choice only affects bias, never the privacy guarantee (any rule
picking <= C_u of a unit's own partitions bounds its influence). Exports to other engines
(`plan.sql(dialect)`) materialise `random()` instead, which every target supports.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

from sqlglot import exp

from core.dpsql.allowlist import safe_double, totalise
from core.dpsql.ir import ROW_LEVEL_KINDS, DPQuery
from core.dpsql.mechanisms import Component, Statistic
from core.dpsql.planning import (  # noqa: F401 - re-exported for release.py and tests
    MAX_EXPONENT,
    MAX_INT_SCALE,
    MAX_UNIT_CONTRIBUTION,
    choose_exponent,
    int_bound,
    midpoints,
    plan_mechanisms,
)
from core.dpsql.postgres import flatten_lists, round_half_away
from core.dpsql.sampling import sampling_stages
from core.dpsql.sampling_key import sampling_key
from core.dpsql.validate import Source
from core.privacy import Mechanism as PrivacyMechanism

DIALECTS = ("duckdb", "spark", "bigquery", "postgres")
STAGE_CAPTIONS = {
    "src": "π σ ⋈ — the validated FROM/WHERE; the privacy unit is propagated as _uid",
    "rows_keyed": "row sample key (for per-row aggregates: at most k rows per unit and group)",
    "rows_ranked": "ROW_NUMBER per (_uid, keys, value IS NULL) by the row key",
    "per_user": "γ_{keys, _uid} — one row per unit and partition with the partial aggregates",
    "unit_sizes": "the number of partitions of each unit",
    "counted": "each (unit, partition) row with its unit's number of partitions",
    "keyed": "materialised random key per (unit, partition) row of units with more than C_u",
    "chosen": "the (unit, partition) pairs ranked <= C_u by the key, per unit",
    "sampled": "Sample_{uid, C_u} — keep at most C_u partitions per unit",
    "clamped": "partials clamped to [L, U] (NULL stays NULL) and integerised (× 2^j)",
    "cross_user": "γ_{keys} — exact per-partition sums and unit count (NON-PRIVATE, noised next)",
    "public_keys": "PUBLIC_GROUPS: the distinct keys of the public table",
    "public_groups": "every public key, left-joined to cross_user (empty groups are pure noise)",
}


@dataclass
class StagedPlan:
    query: DPQuery
    sources: list[Source]
    salt: int
    mechanisms: list[Statistic]  # every noisy statistic of the aggregates
    threshold_mechanism: Statistic | None  # None with PUBLIC_GROUPS (no partition selection)
    threshold_epsilon: Fraction | None
    stages: list[tuple[str, exp.Select]] = field(default_factory=list)
    public_source: Source | None = None

    def drawing_order(self) -> tuple[PrivacyMechanism, ...]:
        """The `core.privacy` mechanisms in the order `release` draws them: partition selection
        first (or the COUNT(DISTINCT uid) it reuses, then the threshold), then every other
        statistic in aggregate order."""
        first: list[PrivacyMechanism] = []
        tm = self.threshold_mechanism
        if tm is not None:
            if tm.mechanism.reuses is not None:
                reused = next(
                    m
                    for m in self.mechanisms
                    if m.aggregate == tm.aggregate and m.component == Component.UNITS
                )
                first.append(reused.mechanism)
            first.append(tm.mechanism)
        rest = [m.mechanism for m in self.mechanisms if all(m.mechanism is not f for f in first)]
        return tuple(first + rest)

    def sql(self, dialect: str = "duckdb", executable: bool = False, pretty: bool = True) -> str:
        """The staged query in `dialect`. Exports use random(); execution uses the salted hash."""
        if dialect not in DIALECTS:
            raise ValueError(f"dialect must be one of {', '.join(DIALECTS)}")
        stages = self.stages if executable else build_stages(self, use_hash=False, dialect=dialect)
        tree = assemble(self.query, stages, total=executable)
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
        return assemble(self.query, upto, final, total=True).sql(dialect="duckdb")


def col(name: str, table: str | None = None) -> exp.Column:
    return exp.column(name, table=table)


def num(value: float | int) -> exp.Expression:
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        value = int(value)
    lit = exp.Literal.number(repr(value) if isinstance(value, float) else value)
    return (
        exp.Neg(this=exp.Literal.number(repr(-value) if isinstance(value, float) else -value))
        if (value < 0)
        else lit
    )


def clamp(e: exp.Expression, low: float, high: float) -> exp.Expression:
    inner = exp.Greatest(this=e, expressions=[num(low)], ignore_nulls=True)
    return exp.Least(this=inner, expressions=[num(high)], ignore_nulls=True)


def null_safe(partial: exp.Expression, value: exp.Expression) -> exp.Expression:
    """CASE WHEN p IS NULL THEN NULL ELSE value END: GREATEST/LEAST skip NULLs on most engines."""
    return exp.Case(
        ifs=[exp.If(this=exp.Is(this=partial.copy(), expression=exp.Null()), true=exp.Null())],
        default=value,
    )


def integerise(e: exp.Expression, exponent: int) -> exp.Expression:
    scaled = e if exponent == 0 else exp.Mul(this=exp.Paren(this=e), expression=num(2.0**exponent))
    return exp.Cast(this=exp.Round(this=scaled), to=exp.DataType.build("BIGINT"))


def as_double(e: exp.Expression) -> exp.Expression:
    return exp.Cast(this=e, to=exp.DataType.build("DOUBLE"))


def rewrite(
    query: DPQuery, sources: list[Source], salt: int, public_source: Source | None = None
) -> StagedPlan:
    """The staged plan for `query`; `salt` (from `Noise`) seeds the partition sampling key."""
    mechs, threshold, eps_tau = plan_mechanisms(query)
    plan = StagedPlan(query, sources, int(salt), mechs, threshold, eps_tau, [], public_source)
    plan.stages = build_stages(plan, use_hash=True, dialect="duckdb")
    return plan


def _random_key(use_hash: bool, parts: list[exp.Expression], salt: int) -> exp.Expression:
    if use_hash:
        return sampling_key(parts, salt)  # same key on DuckDB and Spark (issue 11)
    return exp.Rand()


def build_stages(plan: StagedPlan, use_hash: bool, dialect: str) -> list[tuple[str, exp.Select]]:
    q = plan.query
    aggs = q.aggregates
    nk = len(q.keys)
    keys = [col(f"k{i}") for i in range(nk)]
    k_rows = q.options.max_rows_per_group
    cu = q.options.max_groups_contributed
    mech = {(m.aggregate, m.component): m for m in plan.mechanisms}
    wide = dialect != "duckdb"  # other engines: sum integers as DECIMAL(38, 0)
    stages: list[tuple[str, exp.Select]] = []
    # executed SQL: a value that cannot be cast gives NULL, never a data-dependent error
    to_double = safe_double if use_hash else as_double

    # src: project _uid, keys and aggregate arguments from the validated relation
    uid_cols = [col(s.uid, s.alias) for s in plan.sources if s.private]
    sides = {(j.args.get("side") or "").upper() for j in q.relation.args.get("joins") or []}
    if not sides & {"FULL", "RIGHT"}:
        uid_cols = uid_cols[:1]  # inner/left joins on the unit: the first private side suffices
    uid_expr = (
        uid_cols[0]
        if len(uid_cols) == 1
        else exp.Coalesce(this=uid_cols[0], expressions=uid_cols[1:])
    )
    src = q.relation.copy()
    src.set("with_", None)
    projections = [exp.alias_(uid_expr, "_uid")]
    projections += [exp.alias_(k.copy(), f"k{i}") for i, k in enumerate(q.keys)]
    # one src column per distinct argument expression: a<i> names the first aggregate using it
    arg_col: dict[int, str] = {}
    first: dict[str, str] = {}
    for i, a in enumerate(aggs):
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
    stages.append(("src", totalise(src) if use_hash else src))

    row_aggs = [i for i, a in enumerate(aggs) if a.kind in ROW_LEVEL_KINDS]
    per_user_from = "src"
    if row_aggs:
        row_cols = sorted({arg_col[i] for i in row_aggs})
        parts = [col("_uid"), *keys, *[col(c) for c in row_cols]]
        stages.append(
            (
                "rows_keyed",
                exp.select(
                    "*", exp.alias_(_random_key(use_hash, parts, plan.salt + 1), "_rr")
                ).from_("src"),
            )
        )
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

    # per_user: one row per (keys, unit) with each aggregate's partial
    partials: list[exp.Expression] = []
    for i, a in enumerate(aggs):
        arg = col(arg_col.get(i, f"a{i}"))
        if a.kind == "COUNT_ROWS":
            partials.append(exp.alias_(exp.Count(this=exp.Star()), f"p{i}"))
        elif a.kind == "COUNT_VALUES":
            partials.append(exp.alias_(exp.Count(this=arg), f"p{i}"))
        elif a.kind == "SUM":
            partials.append(exp.alias_(exp.Sum(this=to_double(arg) if use_hash else arg), f"p{i}"))
        elif a.kind == "AVG":
            partials.append(exp.alias_(exp.Avg(this=to_double(arg) if use_hash else arg), f"p{i}"))
        elif a.kind in ("VAR", "STDDEV", "QUANTILE"):
            # rows are ranked within (unit, keys, value IS NULL): keep <= k non-NULL rows
            keep = exp.and_(
                exp.LTE(this=col(f"rn_{arg_col[i]}"), expression=num(k_rows)),
                exp.Not(this=exp.Is(this=arg.copy(), expression=exp.Null())),
            )
            row = clamp(to_double(arg), a.lower, a.upper)
            if a.kind == "QUANTILE":
                cond = keep
                agg = exp.ArrayAgg(this=row) if wide else exp.List(expressions=[row])
                if dialect == "bigquery":  # BigQuery's ARRAY_AGG rejects NULL elements
                    agg = exp.IgnoreNulls(this=agg)
                partials.append(
                    exp.alias_(exp.Filter(this=agg, expression=exp.Where(this=cond)), f"p{i}")
                )
                continue
            m, m2, _ = midpoints(a)
            js, jq = mech[(i, "sum")].exponent, mech[(i, "sumsq")].exponent
            centred = integerise(exp.Sub(this=row, expression=num(m)), js)
            square = integerise(
                exp.Sub(this=exp.Mul(this=row.copy(), expression=row.copy()), expression=num(m2)),
                jq,
            )
            for suffix, body in (
                ("n", exp.Count(this=arg.copy())),
                ("s", exp.Sum(this=centred)),
                ("q", exp.Sum(this=square)),
            ):
                partials.append(
                    exp.alias_(
                        exp.Filter(this=body, expression=exp.Where(this=keep.copy())),
                        f"p{i}{suffix}",
                    )
                )
    per_user = (
        exp.select(*keys, col("_uid"), *partials)
        .from_(per_user_from)
        .where(exp.Not(this=exp.Is(this=col("_uid"), expression=exp.Null())))
        .group_by(*[k.copy() for k in keys], col("_uid"))
    )
    stages.append(("per_user", per_user))

    # at most C_u partitions per unit (core.dpsql.sampling: only units with more are ranked)
    stages += sampling_stages(nk, [p.alias for p in partials], cu, plan.salt, use_hash)

    # clamped: NULL-preserving clamp of per-group partials, integerised by 2^j
    clamped_cols: list[exp.Expression] = []
    for i, a in enumerate(aggs):
        p = col(f"p{i}")
        if a.kind in ("COUNT_ROWS", "COUNT_VALUES"):
            j = mech[(i, "count")].exponent
            value = clamp(p, a.lower, a.upper)
            clamped_cols.append(exp.alias_(integerise(value, j) if j else value, f"c{i}"))
        elif a.kind == "SUM":
            j = mech[(i, "sum")].exponent
            value = integerise(clamp(as_double(p), a.lower, a.upper), j)
            clamped_cols.append(exp.alias_(null_safe(p, value), f"c{i}"))
        elif a.kind == "AVG":
            j = mech[(i, "sum")].exponent
            m = (a.lower + a.upper) / 2
            value = integerise(
                exp.Sub(this=clamp(as_double(p), a.lower, a.upper), expression=num(m)), j
            )
            clamped_cols.append(exp.alias_(null_safe(p, value), f"c{i}"))
        elif a.kind in ("VAR", "STDDEV"):
            clamped_cols += [col(f"p{i}{s}") for s in "nsq"]
        elif a.kind == "QUANTILE":
            clamped_cols.append(p)
    stages.append(("clamped", exp.select(*keys, col("_uid"), *clamped_cols).from_("sampled")))

    # cross_user: exact aggregates per partition; each (unit, partition) row is unique here
    def total(e: exp.Expression) -> exp.Expression:
        if wide:
            e = exp.Cast(this=e, to=exp.DataType.build("DECIMAL(38, 0)"))
        return exp.Sum(this=e)

    outs: list[exp.Expression] = [exp.alias_(exp.Count(this=exp.Star()), "n_units")]
    for i, a in enumerate(aggs):
        if a.kind in ("COUNT_ROWS", "COUNT_VALUES", "SUM"):
            outs.append(exp.alias_(total(col(f"c{i}")), f"s{i}"))
        elif a.kind == "AVG":
            outs.append(exp.alias_(exp.Count(this=col(f"c{i}")), f"n{i}"))
            outs.append(exp.alias_(total(col(f"c{i}")), f"s{i}"))
        elif a.kind in ("VAR", "STDDEV"):
            outs.append(exp.alias_(total(col(f"p{i}n")), f"n{i}"))
            outs.append(exp.alias_(total(col(f"p{i}s")), f"s{i}"))
            outs.append(exp.alias_(total(col(f"p{i}q")), f"q{i}"))
        elif a.kind == "QUANTILE":
            if dialect == "bigquery":  # no nested arrays in BigQuery: concatenate instead
                outs.append(exp.alias_(exp.ArrayConcatAgg(this=col(f"p{i}")), f"l{i}"))
                continue
            if dialect == "postgres":  # no FLATTEN, no ragged ARRAY_AGG: see postgres.py
                outs.append(exp.alias_(flatten_lists(col(f"p{i}")), f"l{i}"))
                continue
            gathered = (
                exp.ArrayAgg(this=col(f"p{i}")) if wide else exp.List(expressions=[col(f"p{i}")])
            )
            outs.append(exp.alias_(exp.Flatten(this=gathered), f"l{i}"))
    cross = exp.select(*keys, *outs).from_("clamped")
    if keys:
        cross = cross.group_by(*[k.copy() for k in keys])
    stages.append(("cross_user", cross))
    if plan.public_source is not None:
        stages += _public_group_stages(plan, [o.alias for o in outs])
    return stages


def _public_group_stages(plan: StagedPlan, stat_names: list[str]) -> list[tuple[str, exp.Select]]:
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
    query: DPQuery,
    stages: list[tuple[str, exp.Select]],
    final: exp.Select | None = None,
    total: bool = False,
) -> exp.Select:
    """WITH <user CTEs>, <stages> SELECT * FROM <last stage>; `total`: the executed form, with
    the user's CTEs totalised like `src` (DuckDB's TRY)."""
    last = stages[-1][0]
    out = (final or exp.select("*").from_(last)).copy()
    user = query.relation.args.get("with_")
    ctes = [totalise(c) if total else c.copy() for c in user.expressions] if user else []
    ctes += [
        exp.CTE(this=s.copy(), alias=exp.TableAlias(this=exp.to_identifier(n))) for n, s in stages
    ]
    out.set("with_", exp.With(expressions=ctes))
    return out
