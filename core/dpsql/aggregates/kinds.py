"""Which class implements each aggregate kind: the one table the pipeline dispatches on."""

from __future__ import annotations

from core.dpsql.aggregates.average import Average
from core.dpsql.aggregates.base import Aggregate
from core.dpsql.aggregates.implicit_count import ImplicitCountRows, ImplicitCountValues
from core.dpsql.aggregates.linear import CountRows, CountUnits, CountValues, Sum
from core.dpsql.aggregates.quantile import Quantile
from core.dpsql.aggregates.variance import StdDev, Variance
from core.dpsql.parse.ir import AggKind

KINDS: dict[AggKind, type[Aggregate]] = {
    cls.KIND: cls
    for cls in (
        CountUnits,
        CountRows,
        CountValues,
        ImplicitCountRows,
        ImplicitCountValues,
        Sum,
        Average,
        Variance,
        StdDev,
        Quantile,
    )
}
assert set(KINDS) == set(AggKind), "every aggregate kind has its class"


def kind_class(kind: AggKind) -> type[Aggregate]:
    return KINDS[AggKind(kind)]
