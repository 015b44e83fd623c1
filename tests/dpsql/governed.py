"""Run prepared DP SQL queries as the product does: through the governed flow, charged to a
registered dataset of a temporary registry. Tests of refusals before any data is read, of
charges that stand after a failure, and of budgets and caps use it."""

from __future__ import annotations

from pathlib import Path

from core.dpsql.record import sql_artefact
from core.dpsql.service import Prepared, QueryResult, check_before_charge, run
from core.governance import Request, Role, govern
from core.governance.caps import NO_CAPS, QueryCaps
from core.privacy import Noise
from core.registry import Claim, Policy, Registry


class Charged:
    """A registered dataset `d` with an (ε, δ) budget and optional per-query caps."""

    def __init__(self, directory: Path, epsilon: float = 1e300, delta: float = 0.999):
        directory.mkdir(parents=True, exist_ok=True)
        table = directory / "placeholder.csv"  # the catalog is given directly to `run`
        table.write_text("uid\n1\n")
        self.registry = Registry(directory / "registry")
        if self.registry.find("d") is None:
            self.registry.add_dataset(
                "d", [("t", table)], Policy(epsilon, delta), uid="uid",
            )  # fmt: skip

    def run(self, prepared: Prepared, engine, caps: QueryCaps = NO_CAPS) -> QueryResult:
        """A charged run with secure noise (a registered dataset refuses seeded noise);
        `caps` are the invocation's own per-query caps (`dpx sql --max-*-per-query`)."""
        noise = Noise.secure()
        check_before_charge(prepared, engine)
        cost = prepared.cost
        request = Request(
            tool="sql", role=Role.OWNER, dataset=self.registry.dataset("d"), params={},
            cost=cost, claim=Claim("one person (column uid)", "uid"), noise=noise,
            extra_checks=(lambda: caps.check(cost.epsilon, cost.delta),),
        )  # fmt: skip
        return govern(
            self.registry, request, lambda acc: run(prepared, engine, acc),
            lambda r: sql_artefact(r, "uid").to_json(),
        ).result  # fmt: skip

    @property
    def spent(self) -> tuple[float, float]:
        return self.registry.spent("d")
