"""Plan a DP SQL release backwards: from accuracy targets to the smallest ε that meets them.

Everything is read off the query's own planned mechanisms: at every candidate ε the query is
re-planned through DP SQL's real planner and stager (`prepared_at`: the same `plan_query` and
`stage` that `core.dpsql.service.prepare` runs; only ε, the weights or C_u differ), and the
targets are checked against the planned `Aggregate` objects (`half_width`, an AVG's two
statistics) and the `NoisyThreshold` (`survival`). Accuracy is monotone in ε (a larger ε gives
every mechanism a smaller scale), so bisection finds the smallest ε; the answer is rounded up
and verified at the rounded value.

Two answers: the query as written (its own split of ε by weights), and an optimised split in
which each aggregate gets just the share its target needs (DP Creator users asked to give the
important statistics a larger share) — expressed as `weight => w` per aggregate and
`threshold_weight`, so the user can write it into the query. The C_u trade-off repeats the
optimised plan for several `max_groups_contributed`.

Nothing here reads data: the catalogue needs the tables' schemas only, and a plan charges
nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction

from core.dpsql.aggregates.kinds import kind_class
from core.dpsql.parse.ir import AggKind
from core.dpsql.plan.planner import Plan, aggregate_names, plan_query
from core.dpsql.service import Prepared
from core.dpsql.sql.stages import stage
from core.errors import InputError
from core.planning.search import round_up, smallest_passing
from core.planning.sql_targets import (
    IMPLICIT_COUNT_KINDS,
    SqlTarget,
    accuracy,
    check_plannable,
    find_aggregate,
    implicit_note,
    survival,
    user_words,
)
from core.privacy import Cost, Mechanism

EPSILON_LOW, EPSILON_HIGH = 1e-4, 1e3
CU_CHOICES = (1, 2, 4, 8, 16)
SURVIVAL_SIZES = (1, 5, 10, 20, 50, 100, 200, 500, 1000)


def prepared_at(
    prepared: Prepared,
    epsilon: float,
    weights: tuple[float, ...] | None = None,
    threshold_weight: float | None = None,
    max_groups: int | None = None,
) -> Prepared:
    """The checked query re-planned at `epsilon` (and optionally other weights or C_u) through
    DP SQL's planner and stager; its `mechanisms` and `cost` are what a release at these
    parameters would draw and charge. Raises InputError when ε is too small to plan."""
    q = prepared.query
    options = replace(q.options, epsilon=float(epsilon))
    if threshold_weight is not None:
        options = replace(options, threshold_weight=float(threshold_weight))
    if max_groups is not None:
        options = replace(options, max_groups_contributed=int(max_groups))
    aggregates = q.aggregates
    if weights is not None:
        aggregates = [replace(a, weight=float(w)) for a, w in zip(aggregates, weights, strict=True)]
    query = replace(q, options=options, aggregates=list(aggregates))
    p = prepared.plan
    plan = plan_query(query, p.sources, p.salt, p.public_source, p.row_caps, p.integer_unit)
    return Prepared(query, plan, stage(plan), prepared.catalog)


@dataclass(frozen=True)
class TargetCheck:
    """One target against a planned query: the half-width it needs and the one planned."""

    target: SqlTarget
    required: float
    planned: float
    survival: float | None  # P(a group of target.min_units units is released)
    confidence: float

    @property
    def met(self) -> bool:
        ok = self.planned <= self.required * (1 + 1e-12)
        return ok and (self.survival is None or self.survival >= self.confidence)

    def to_json(self) -> dict:
        return {
            **self.target.to_json(),
            "required_half_width": self.required,
            "planned_half_width": self.planned,
            "survival": self.survival,
            "met": self.met,
        }


def check_targets(plan: Plan, targets: tuple[SqlTarget, ...], confidence: float):
    """Every target against `plan` (the planned aggregates and threshold)."""
    out = []
    for t in targets:
        agg = find_aggregate(plan, t)
        alive = None if t.min_units is None else survival(plan, t.min_units)
        out.append(TargetCheck(t, t.required(), accuracy(agg, t, confidence), alive, confidence))
    return tuple(out)


def _meets(prepared, targets, confidence, **kw):
    def passes(eps: float) -> bool:
        try:
            at = prepared_at(prepared, eps, **kw)
        except InputError:  # ε too small to plan (DPX-V030): not met
            return False
        return all(c.met for c in check_targets(at.plan, targets, confidence))

    return passes


@dataclass(frozen=True)
class SplitRow:
    """One mechanism of the planned release: its aggregate, ε, δ and noise scale."""

    label: str
    epsilon: float
    delta: float
    scale: float

    def to_json(self) -> dict:
        return {
            "label": self.label,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "scale": self.scale,
        }


@dataclass(frozen=True)
class SplitPlan:
    """A planned ε with its split (the query's own weights, or optimised ones)."""

    epsilon: float
    delta: float
    weights: tuple[float, ...]  # one per aggregate, in query order
    threshold_weight: float | None  # None: the threshold reuses COUNT(DISTINCT uid) or none
    threshold: int | None
    rows: tuple[SplitRow, ...]
    checks: tuple[TargetCheck, ...]
    mechanisms: tuple[Mechanism, ...]


def shown_label(label: str, plan: Plan) -> str:
    """A mechanism's label in the user's words: `stops: COUNT(*) count`, never the internal
    kind name of a count without contribution bounds."""
    for agg in plan.aggregates:
        if agg.KIND in IMPLICIT_COUNT_KINDS:
            label = label.replace(f"{agg.name}: {agg.KIND.value}", f"{agg.name}: {user_words(agg)}")
    return label


def _split_plan(prepared: Prepared, targets, confidence) -> SplitPlan:
    plan = prepared.plan
    q = prepared.query
    th = plan.selection.mechanism.threshold if plan.selection is not None else None
    own_threshold = plan.selection is not None and plan.selection.mechanism.reuses is None
    return SplitPlan(
        epsilon=prepared.cost.epsilon,
        delta=prepared.cost.delta,
        weights=tuple(float(a.weight) for a in q.aggregates),
        threshold_weight=float(q.options.threshold_weight) if own_threshold else None,
        threshold=None if th is None else int(th),
        rows=tuple(
            SplitRow(shown_label(m.label, plan), m.cost.epsilon, m.cost.delta, float(m.scale))
            for m in prepared.mechanisms
        ),
        checks=check_targets(plan, targets, confidence),
        mechanisms=prepared.mechanisms,
    )


@dataclass(frozen=True)
class CuRow:
    """The optimised plan at one C_u (max_groups_contributed)."""

    max_groups: int
    epsilon: float | None  # None: no ε up to the search's ceiling meets the targets
    threshold: int | None


@dataclass(frozen=True)
class SqlPlan:
    """The planner's answer for one query (see the module docstring)."""

    query: str
    confidence: float
    targets: tuple[SqlTarget, ...]
    as_written: SplitPlan  # the query's own split at the smallest ε meeting every target
    optimised: SplitPlan  # each aggregate's share just large enough
    aggregate_names: tuple[str, ...]
    survival: tuple[tuple[int, float], ...]  # group size -> P(released), at the planned ε
    cu_tradeoff: tuple[CuRow, ...]
    max_groups: int
    basis: str
    notes: tuple[str, ...] = ()  # what the plan assumes (a count without contribution bounds)

    @property
    def epsilon(self) -> float:
        return self.as_written.epsilon

    @property
    def cost(self) -> Cost:
        """(ε, δ) a release of the query as written at the planned ε is charged."""
        return Cost(self.as_written.epsilon, self.as_written.delta)

    def describe(self) -> str:
        """One sentence for a stakeholder."""
        goals = "; ".join(t.words(self.confidence) for t in self.targets)
        th = self.as_written.threshold
        gate = "" if th is None else f", releasing a group when its noisy unit count reaches {th}"
        better = ""
        if self.optimised.epsilon < self.epsilon * (1 - 1e-9):
            better = (
                f" (or epsilon {self.optimised.epsilon:g} with each statistic's share set to "
                "what its target needs)"
            )
        notes = "".join(f" {n}" for n in self.notes)
        return (
            f"Epsilon {self.epsilon:g} (delta {self.as_written.delta:g}) meets every target — "
            f"{goals} — with the query's own split{gate}{better}.{notes}"
        )

    def to_json(self) -> dict:
        def split(s: SplitPlan) -> dict:
            return {
                "epsilon": s.epsilon,
                "delta": s.delta,
                "weights": dict(zip(self.aggregate_names, s.weights, strict=True)),
                "threshold_weight": s.threshold_weight,
                "threshold": s.threshold,
                "split": [r.to_json() for r in s.rows],
                "targets": [c.to_json() for c in s.checks],
                "mechanisms": [m.to_json() for m in s.mechanisms],
            }

        written = split(self.as_written)
        return {
            "tool": "sql",
            "query": self.query,
            "confidence": self.confidence,
            "epsilon": self.epsilon,
            "delta": self.as_written.delta,
            "split": {r.label: r.epsilon for r in self.as_written.rows},
            "threshold": self.as_written.threshold,
            "survival": {str(n): p for n, p in self.survival},
            "as_written": written,
            "optimised": split(self.optimised),
            "max_groups_contributed": self.max_groups,
            "cu_tradeoff": [
                {"max_groups": r.max_groups, "epsilon": r.epsilon, "threshold": r.threshold}
                for r in self.cu_tradeoff
            ],
            "basis": self.basis,
            "notes": list(self.notes),
            "describe": self.describe(),
        }


BASIS = (
    "Computed from the query's public parameters only (its bounds, C_u = {cu}, delta and "
    "weights) by planning the query at each candidate epsilon with DP SQL's own planner and "
    "reading the planned mechanisms' half-widths and survival probabilities; no data was read "
    "and nothing was charged."
)


def plan_sql(
    prepared: Prepared, targets: tuple[SqlTarget, ...] | list[SqlTarget], confidence: float = 0.95
) -> SqlPlan:
    """The smallest ε meeting every target (query's own split), the optimised split, the
    threshold and survival, and the C_u trade-off. Raises InputError (one line) for a target
    the planner cannot read, and for targets no ε up to 1000 meets."""
    targets = tuple(targets)
    if not targets:
        raise InputError("give at least one --target NAME=HALF_WIDTH (e.g. total=50).")
    if not 0.5 <= confidence < 1:
        raise InputError(f"--confidence must be in [0.5, 1), got {confidence}.")
    notes: list[str] = []
    for t in targets:
        agg = find_aggregate(prepared.plan, t)
        check_plannable(agg, t)
        note = implicit_note(agg)
        if note is not None and note not in notes:
            notes.append(note)
    written = _smallest_written(prepared, targets, confidence, None)
    optimised = _optimised(prepared, targets, confidence, None)
    if optimised is None or optimised.epsilon > written.epsilon:
        optimised = written  # rounding can make the tuned split no better: keep the query's
    final = prepared_at(prepared, written.epsilon)
    sizes = sorted({*SURVIVAL_SIZES, *(t.min_units for t in targets if t.min_units)})
    cu = prepared.query.options.max_groups_contributed
    return SqlPlan(
        query=prepared.query.text,
        confidence=confidence,
        targets=targets,
        as_written=written,
        optimised=optimised,
        aggregate_names=tuple(aggregate_names(prepared.query)),
        survival=tuple((n, survival(final.plan, n)) for n in sizes),
        cu_tradeoff=_cu_tradeoff(prepared, targets, confidence, cu),
        max_groups=cu,
        basis=BASIS.format(cu=cu),
        notes=tuple(notes),
    )


def _smallest_written(prepared, targets, confidence, max_groups) -> SplitPlan:
    kw = {} if max_groups is None else {"max_groups": max_groups}
    eps = smallest_passing(_meets(prepared, targets, confidence, **kw), EPSILON_LOW, EPSILON_HIGH)
    if eps is None:
        at = prepared_at(prepared, EPSILON_HIGH, **kw)
        misses = [c for c in check_targets(at.plan, targets, confidence) if not c.met]
        raise InputError(_infeasible(misses[0]))
    return _split_plan(prepared_at(prepared, eps, **kw), targets, confidence)


def _infeasible(check: TargetCheck) -> str:
    t = check.target
    gate = (
        ""
        if check.survival is None
        else f", and a group of {t.min_units} units survives with probability {check.survival:.3g}"
    )
    return (
        f"no epsilon up to {EPSILON_HIGH:g} meets the target {t.words(check.confidence)}: even "
        f"there the half-width is {check.planned:.4g}{gate}. Fix: a looser target, tighter "
        "contribution bounds, or a smaller C_u (max_groups_contributed)."
    )


def _optimised(prepared, targets, confidence, max_groups) -> SplitPlan | None:
    """Each targeted aggregate's smallest share meeting its own targets (planned by its kind's
    real planner), the threshold's smallest share meeting the survival targets, untargeted
    aggregates at the smallest targeted share; then verified through `prepared_at`."""
    q = prepared.query
    options = q.options
    if max_groups is not None:
        options = replace(options, max_groups_contributed=int(max_groups))
    names = aggregate_names(q)
    shares: list[float | None] = []
    for i, spec in enumerate(q.aggregates):
        mine = [t for t in targets if t.aggregate.lower() == names[i].lower()]
        if not mine:
            shares.append(None)
            continue
        need = _share_for(kind_class(spec.kind), i, spec, names[i], options, mine, confidence)
        if need is None:
            return None
        shares.append(need)
    survival_targets = tuple(t for t in targets if t.min_units)
    reuse = next((i for i, a in enumerate(q.aggregates) if a.kind == AggKind.COUNT_UNITS), None)
    gate = None
    if survival_targets and not options.public_groups:
        gate = _threshold_share(prepared, shares, survival_targets, confidence, reuse, max_groups)
        if gate is None:
            return None
    known = [s for s in shares if s is not None] or [gate or EPSILON_LOW]
    floor = min(known)
    weights = [s if s is not None else floor for s in shares]
    threshold_weight = None
    if not options.public_groups:
        if reuse is not None:
            weights[reuse] = max(weights[reuse], gate or 0.0)
        else:
            threshold_weight = gate if gate is not None else floor
    weights = [round_up(w) for w in weights]
    if threshold_weight is not None:
        threshold_weight = round_up(threshold_weight)
    total = sum(weights) + (threshold_weight or 0.0)
    kw = {"weights": tuple(weights), "threshold_weight": threshold_weight}
    if max_groups is not None:
        kw["max_groups"] = max_groups
    passes = _meets(prepared, targets, confidence, **kw)
    eps = smallest_passing(passes, round_up(total), max(EPSILON_HIGH, total * 2))
    if eps is None:
        return None
    return _split_plan(prepared_at(prepared, eps, **kw), targets, confidence)


def _share_for(cls, index, spec, name, options, targets, confidence) -> float | None:
    """The smallest ε share at which aggregate `index` alone meets its targets."""

    def passes(eps: float) -> bool:
        try:
            agg = cls.plan(index, spec, name, Fraction(eps), options)
        except InputError:
            return False
        return all(accuracy(agg, t, confidence) <= t.required() * (1 + 1e-12) for t in targets)

    return smallest_passing(passes, EPSILON_LOW, EPSILON_HIGH, digits=6)


def _threshold_share(prepared, shares, targets, confidence, reuse, max_groups) -> float | None:
    """The smallest share of partition selection at which every group size of the targets
    survives with probability >= confidence, read off the planned `NoisyThreshold`."""
    base = [s if s is not None else 1.0 for s in shares]

    def passes(x: float) -> bool:
        weights = list(base)
        tw = None
        if reuse is not None:
            weights[reuse] = x
        else:
            tw = x
        kw = {"weights": tuple(weights), "threshold_weight": tw}
        if max_groups is not None:
            kw["max_groups"] = max_groups
        try:
            at = prepared_at(prepared, sum(weights) + (tw or 0.0), **kw)
        except InputError:
            return False
        return all(survival(at.plan, t.min_units) >= confidence for t in targets)

    return smallest_passing(passes, EPSILON_LOW, EPSILON_HIGH, digits=6)


def _cu_tradeoff(prepared, targets, confidence, current: int) -> tuple[CuRow, ...]:
    rows = []
    for cu in sorted({*CU_CHOICES, current}):
        best = _optimised(prepared, targets, confidence, cu)
        rows.append(
            CuRow(
                cu, None if best is None else best.epsilon, None if best is None else best.threshold
            )
        )
    return tuple(rows)
