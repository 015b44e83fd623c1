"""Several location histograms in one click: each method governed on its own (charged once,
before it is built, recorded with the mechanisms that drew); the set checked against the
budget as a whole; evaluation charges nothing and reports its rebuilds' ε as evaluation cost."""

from __future__ import annotations

import numpy as np
import pytest

from core.errors import BudgetExceededError
from core.governance import Role
from core.governance.location import release_methods
from core.governance.origin import Origin
from core.privacy import Noise, PrivacyUnit, same_mechanism
from core.registry import Policy, Registry, RunKind, Status
from core.spatial.evaluate import stream
from core.spatial.grid import Grid
from core.spatial.pipeline import Prepared as Binned
from core.spatial.release import Release, release_cost
from core.spatial.releases import ChargedRelease, evaluate
from core.spatial.service import LocationParams, prepare

METHODS = ["htf", "ug", "uniform"]


@pytest.fixture
def F() -> np.ndarray:
    """A 32 x 32 count grid with one dense cluster (fixed seed)."""
    rng = np.random.default_rng(5)
    grid = rng.poisson(2.0, size=(32, 32))
    grid[4:10, 20:28] += rng.poisson(40.0, size=(6, 8))
    return grid.astype(np.int64)


@pytest.fixture
def grid(F) -> Grid:
    return Grid(F.shape[0], F.shape[1], (-1.0, -1.0, 1.0, 1.0))


@pytest.fixture
def registry(registry_dir, tmp_path) -> Registry:
    table = tmp_path / "points.csv"
    table.write_text("lat,lon\n1,2\n")
    reg = Registry(registry_dir)
    reg.add_dataset("visits", [("points", table)], Policy(3.5))
    return reg


def seeded(method: str) -> Noise:
    return stream(11, 0, method)


def build(registry, F, grid, methods, eps, noise_for=lambda m: Noise.secure(), dataset="visits"):
    d = None if dataset is None else registry.dataset(dataset)
    prepared = [
        prepare(LocationParams(m, eps, grid.bbox, rows=grid.ny, cols=grid.nx), d) for m in methods
    ]
    data = Binned(F, grid, int(F.sum()), 0, False, "lat", "lon")
    return release_methods(
        registry, Role.OWNER, d, prepared, data, noise_for, Origin.app("test-session")
    )


def test_each_method_charged_once_and_recorded_with_what_drew(F, grid, registry):
    built = build(registry, F, grid, METHODS, 1.0)
    assert [b.method for b in built] == METHODS
    assert registry.spent("visits")[0] == pytest.approx(3.0)  # basic composition: k · ε
    records = registry.releases("visits")
    assert [r.method for r in records] == METHODS and [r.id for r in records] == [
        b.charge_id for b in built
    ]
    for record, b in zip(records, built, strict=True):
        assert record.kind is RunKind.RELEASE and record.status is Status.RELEASED
        assert record.epsilon == 1.0 and record.params["rows"] == 32
        assert len(record.artefact["leaves"]) == b.release.n_leaves
        assert record.artefact["values"] == b.release.values.tolist()  # what the map shows
        assert release_cost(b.release).epsilon <= b.epsilon + 1e-9
        # the registry's rows are the mechanism objects that drew (read back typed)
        assert len(record.mechanisms) == len(b.release.mechanisms)
        for row, m in zip(record.mechanisms, b.release.mechanisms, strict=True):
            assert same_mechanism(row, m)
        assert record.claim.unit == PrivacyUnit.record().words()


def test_a_set_over_budget_builds_nothing(F, grid, registry):
    drawn = []

    def noise_for(method):
        drawn.append(method)
        return Noise.secure()

    with pytest.raises(BudgetExceededError, match="4 release"):
        build(registry, F, grid, [*METHODS, "ag"], 1.0, noise_for)
    assert registry.spent("visits") == (0.0, 0.0) and registry.releases("visits") == []
    assert len(registry.refusals("visits")) == 1  # refused whole, before the first charge


def test_unregistered_and_seeded_runs_are_recorded_not_charged(F, grid, registry):
    built = build(registry, F, grid, ["ug"], 0.5, seeded, dataset=None)
    (record,) = registry.releases(kind=RunKind.DEMO)
    assert record.id == built[0].charge_id and record.status is Status.RELEASED
    assert registry.spent("visits") == (0.0, 0.0)


def test_evaluation_charges_nothing_and_reports_its_cost(F, grid, registry):
    built = build(registry, F, grid, ["htf", "ug"], 1.0)
    result = evaluate(built, F, n_queries=200, reps=2, seed=3)
    assert registry.spent("visits")[0] == pytest.approx(2.0)  # evaluation is not a release
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
