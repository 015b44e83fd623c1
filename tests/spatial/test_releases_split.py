"""Releases and evaluation apart (issue 12): `build_releases` charges each method once, before
building it, to an in-memory total or the registry; `evaluate` charges nothing and reports its rebuilds'
ε as evaluation cost."""

from __future__ import annotations

import numpy as np
import pytest

from core.errors import BudgetExceededError
from core.privacy import Noise, same_mechanism
from core.registry import Policy, Registry, RunKind, Status
from core.spatial.evaluate import stream
from core.spatial.grid import Grid
from core.spatial.release import Release, release_cost
from core.spatial.releases import (
    ChargedRelease,
    LedgerCharge,
    RegistryCharge,
    build_releases,
    evaluate,
)

METHODS = ["htf", "ug", "uniform"]


@pytest.fixture
def F() -> np.ndarray:
    """A 32 x 32 count grid with one dense cluster (fixed seed)."""
    rng = np.random.default_rng(5)
    grid = rng.poisson(2.0, size=(32, 32))
    grid[4:10, 20:28] += rng.poisson(40.0, size=(6, 8))
    return grid.astype(np.int64)


def seeded(method: str) -> Noise:
    return stream(11, 0, method)


class RecordingCharge(LedgerCharge):
    """An in-memory charge that logs the order of charges, noise draws and attachments."""

    def __init__(self, total, events):
        super().__init__(total)
        self.events = events

    def charge(self, plan):
        self.events.append(("charge", plan.method, self.epsilon_spent))
        return super().charge(plan)

    def attach(self, charged):
        self.events.append(("attach", charged.method, self.epsilon_spent))


def test_each_method_charged_once_before_it_is_built(F):
    events = []
    charge = RecordingCharge(10.0, events)

    def noise_for(method):
        events.append(("build", method, charge.epsilon_spent))
        return seeded(method)

    built = build_releases(F, METHODS, 1.0, noise_for, charge)
    assert [b.method for b in built] == METHODS
    assert charge.epsilon_spent == pytest.approx(3.0)  # basic composition: k · ε
    assert len(charge.charged) == 3
    expected = []
    for i, m in enumerate(METHODS):
        expected += [("charge", m, i), ("build", m, i + 1), ("attach", m, i + 1)]
    assert events == expected  # sums of 1.0 are exact
    for b in built:  # each builder stayed within its own charge
        assert release_cost(b.release).epsilon <= b.epsilon + 1e-9
        assert b.release.method == b.method and b.noise_label == seeded(b.method).label


def test_a_set_over_budget_builds_nothing(F):
    drawn = []
    charge = LedgerCharge(2.5)

    def noise_for(method):
        drawn.append(method)
        return seeded(method)

    with pytest.raises(BudgetExceededError):
        build_releases(F, METHODS, 1.0, noise_for, charge)
    assert charge.epsilon_spent == 0.0 and drawn == []


def test_registry_charges_one_release_per_method(F, registry_dir, tmp_path):
    table = tmp_path / "points.csv"
    table.write_text("lat,lon\n1,2\n")
    registry = Registry(registry_dir)
    registry.add_dataset("visits", [("points", table)], Policy(2.0))
    grid = Grid(F.shape[0], F.shape[1], (-1.0, -1.0, 1.0, 1.0))
    charge = RegistryCharge(registry, "visits", "secure", {"grid": [32, 32]}, grid)
    built = build_releases(F, ["ug", "uniform"], 1.0, lambda m: Noise.secure(), charge)
    records = registry.releases("visits")
    assert [r.method for r in records] == ["ug", "uniform"]
    assert [r.id for r in records] == [b.charge_id for b in built]
    for record, b in zip(records, built, strict=True):
        assert record.kind is RunKind.RELEASE and record.status is Status.RELEASED
        assert record.epsilon == 1.0 and record.params["grid"] == [32, 32]
        assert len(record.artefact["leaves"]) == b.release.n_leaves
        assert record.artefact["values"] == b.release.values.tolist()  # what the map shows
        # the registry's rows are the mechanism objects that drew (read back typed)
        assert len(record.mechanisms) == len(b.release.mechanisms)
        for row, m in zip(record.mechanisms, b.release.mechanisms, strict=True):
            assert same_mechanism(row, m)
        assert record.privacy["unit"] == "one point (one row of the table)"
    assert registry.spent("visits") == (2.0, 0.0)

    with pytest.raises(BudgetExceededError, match="remaining epsilon 0"):
        build_releases(F, ["ug"], 0.5, lambda m: Noise.secure(), charge)
    assert registry.spent("visits") == (2.0, 0.0)
    assert len(registry.refusals("visits")) == 1 and len(registry.releases("visits")) == 2


def test_evaluation_charges_nothing_and_reports_its_cost(F):
    charge = LedgerCharge(10.0)
    built = build_releases(F, ["htf", "ug"], 1.0, seeded, charge)
    result = evaluate(built, F, n_queries=200, reps=2, seed=3)
    assert charge.epsilon_spent == pytest.approx(2.0)  # evaluation is not a release
    assert result.evaluation_epsilon == pytest.approx(2 * 2 * 1.0)  # reps · Σ ε, not charged
    rows = result.table()
    assert [r["method"] for r in rows] == ["htf", "ug"]
    assert all(r["evaluation_epsilon"] == 2.0 and r["reps"] == 2 for r in rows)
    assert all(np.isfinite(r["released_mre"]) and r["released_mre"] > 0 for r in rows)
    assert "not differentially private" in result.label
    again = evaluate(built, F, n_queries=200, reps=2, seed=3)
    assert again.table() == rows  # fixed seed: reproducible


def test_evaluation_scores_the_charged_release_itself(F):
    """An exact 'release' (every cell its true count) scores MRE 0, while the evaluation
    rebuilds of the same method (with noise) do not: the released artefact is what is scored."""
    ny, nx = F.shape
    r, c = np.meshgrid(np.arange(ny), np.arange(nx), indexing="ij")
    leaves = np.stack([r.ravel(), r.ravel() + 1, c.ravel(), c.ravel() + 1], axis=1)
    exact = Release("identity", leaves, F.ravel().astype(float), {"total": 1.0}, ())
    result = evaluate([ChargedRelease("identity", 1.0, exact, "exact")], F, n_queries=100, reps=2)
    (row,) = result.table()
    assert row["released_mre"] == pytest.approx(0.0, abs=1e-12)
    assert row["mre_over_reps"] > 0.01
