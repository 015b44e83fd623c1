"""Plan a checked query from public parameters only: the ε split, one planned `Aggregate` per
DP aggregate (each owning its mechanisms), and partition selection (spec §2.5-§2.6, §2.10).

Privacy claim (unit = the catalogue's privacy unit): each statistic releases one per-partition
value with noise calibrated to C_u·Δ, where Δ is the integerised per-partition sensitivity and
ε_i its share of the query's ε; partition selection is a noisy threshold at (ε_τ, δ). With
`noise = 'gaussian'` counts and sums get discrete Gaussian noise calibrated to √C_u·Δ at
(ε_i, δ_i) and the threshold takes δ_τ, the δ_i and δ_τ adding up to δ (`split_delta`). The
shares add up to (ε, δ), so by basic composition the release is (ε, δ)-DP: `Plan.cost`, the
composition of `Plan.drawing_order()`. Nothing here reads data.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction

from core.data.declared import ColumnType
from core.dpsql.aggregates.base import Aggregate
from core.dpsql.aggregates.kinds import kind_class
from core.dpsql.catalog import Catalog
from core.dpsql.check.amplification import RowCap
from core.dpsql.check.relations import Source
from core.dpsql.parse.ir import AggKind, DPQuery
from core.dpsql.plan.budget_split import split_delta, split_epsilon
from core.dpsql.plan.integers import MAX_INT_SCALE
from core.dpsql.plan.statistics import Component, Statistic, threshold_statistic
from core.dpsql.plan.threshold import ThresholdInfo, engine_threshold, threshold_info
from core.errors import InputError
from core.privacy import Cost, Mechanism


@dataclass
class Plan:
    """What the query releases and how: every mechanism, from public parameters only."""

    query: DPQuery
    sources: list[Source]
    salt: int  # seeds the partition and row sampling keys (drawn from `Noise`)
    aggregates: list[Aggregate]
    selection: Statistic | None  # the noisy threshold; None with PUBLIC_GROUPS
    selection_epsilon: Fraction | None  # ε_τ (the reused count's when it is reused)
    public_source: Source | None = None  # PUBLIC_GROUPS: the table listing the groups
    row_caps: tuple[RowCap, ...] = ()  # private tables capped in rows per unit (private joins)
    integer_unit: bool = False  # every private source's unit is a declared INTEGER column

    @property
    def statistics(self) -> list[Statistic]:
        """Every noisy statistic of the aggregates, in aggregate order."""
        return [s for a in self.aggregates for s in a.statistics]

    def drawing_order(self) -> tuple[Mechanism, ...]:
        """The `core.privacy` mechanisms in the order `release` draws them: partition selection
        first (or the COUNT(DISTINCT uid) it reuses, then the threshold), then every other
        statistic in aggregate order."""
        first: list[Mechanism] = []
        if self.selection is not None:
            if self.selection.mechanism.reuses is not None:
                first.append(self.reused_units().mechanism)
            first.append(self.selection.mechanism)
        rest = [s.mechanism for s in self.statistics if all(s.mechanism is not f for f in first)]
        return tuple(first + rest)

    def reused_units(self) -> Statistic:
        """The COUNT(DISTINCT uid) statistic partition selection reuses."""
        return self.aggregates[self.selection.aggregate].statistic(Component.UNITS)

    def threshold_info(self) -> ThresholdInfo | None:
        """tau, T, ε_τ, scale and realised δ of partition selection (None: PUBLIC_GROUPS)."""
        if self.selection is None:
            return None
        return threshold_info(
            self.selection.mechanism.scale,
            float(self.selection_epsilon),
            self.selection.mechanism.delta,
            self.selection.max_groups,
        )

    @property
    def cost(self) -> Cost:
        return Cost.of(self.drawing_order())


def aggregate_names(query: DPQuery) -> list[str]:
    """A readable, unique name per aggregate: its output alias when it is output bare."""
    names: list[str] = []
    for i in range(len(query.aggregates)):
        name = next((o.name for o in query.outputs if o.aggregate_index == i), f"v{i}")
        names.append(name if name not in names else f"{name} #{i}")
    return names


def integer_unit(sources: list[Source], catalog: Catalog) -> bool:
    """Whether every private source is a catalogue table whose unit column is declared INTEGER
    (read as BIGINT by every engine): then the C_u sampling key mixes the unit's bits directly
    (`core.dpsql.sql.partition_key`); otherwise it hashes the unit's text. A declared type is
    a public fact, so the choice reads no data."""
    private = [s for s in sources if s.private]
    if not private:
        return False
    for source in private:
        spec = catalog.get(source.table) if source.table else None
        column = spec.schema.column(source.uid) if spec is not None and source.uid else None
        if column is None or column.type is not ColumnType.INTEGER:
            return False
    return True


def plan_query(
    query: DPQuery,
    sources: list[Source],
    salt: int,
    public_source: Source | None = None,
    row_caps: tuple[RowCap, ...] = (),
    integer_unit: bool = False,
) -> Plan:
    """The plan of `query`: aggregates with their mechanisms and partition selection.
    `integer_unit` (see `integer_unit`) only chooses how the sampling key reads the unit."""
    shares, reuse = split_epsilon(query)
    names = aggregate_names(query)
    gaussian = sum(
        1
        for s in shares
        if s.aggregate is not None and kind_class(query.aggregates[s.aggregate].kind).GAUSSIAN
    )
    per_statistic, delta_tau = split_delta(query, gaussian)
    options = replace(query.options, gaussian_delta=per_statistic)
    aggregates = [
        kind_class(query.aggregates[s.aggregate].kind).plan(
            s.aggregate, query.aggregates[s.aggregate], names[s.aggregate], s.epsilon, options
        )
        for s in shares
        if s.aggregate is not None
    ]
    for stat in (s for a in aggregates for s in a.statistics):
        if stat.component != Component.QUANTILE and stat.scale > MAX_INT_SCALE:
            _too_small(query, stat.scale)
    plan = Plan(
        query, sources, int(salt), aggregates, None, None, public_source, row_caps, integer_unit
    )
    if query.options.public_groups:
        return plan
    own = next((s.epsilon for s in shares if s.aggregate is None), None)
    plan.selection_epsilon = own if reuse is None else shares[reuse].epsilon
    plan.selection = _selection(query, plan.selection_epsilon, aggregates, reuse, delta_tau)
    return plan


def _selection(
    query: DPQuery, eps_tau: Fraction, aggregates, reuse: int | None, delta: float
) -> Statistic:
    """Partition selection at (ε_τ, δ): keep a partition when its noisy unit count reaches T
    (+ m - 1 with the pre-threshold m), T the smallest integer with P(1 + Z >= T) <= δ_adj."""
    cu = query.options.max_groups_contributed
    if cu / eps_tau > MAX_INT_SCALE:
        _too_small(query, float(cu / eps_tau))
    t = engine_threshold(float(eps_tau), delta, cu)
    t += (query.options.min_privacy_units_per_group or 1) - 1
    if reuse is None:
        return threshold_statistic(
            "partition selection: unit count >= T", eps_tau, delta, t, cu, None
        )
    reused = aggregates[reuse]
    assert reused.KIND is AggKind.COUNT_UNITS
    units = reused.statistic(Component.UNITS)
    label = f"partition selection: {units.mechanism.label} >= T"
    return threshold_statistic(label, eps_tau, delta, t, cu, units)


def _too_small(query: DPQuery, scale: float) -> None:
    raise InputError(
        f"DPX-V030 epsilon = {query.options.epsilon:g} is too small: a noise scale of "
        f"{scale:.3g} would drown every result. Fix: raise epsilon or use fewer aggregates."
    )
