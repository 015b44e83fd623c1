"""Every noisy draw of every location method goes through a mechanism (issue 16, Build item 1).

`Noise`'s Laplace-family samplers and its uniform sampler are instrumented: each call records the
mechanism whose draw is under way (`core.privacy.DRAWING`) and the scale it was asked for. For
every method, every HTF variant, Recommended, a person unit, the charged build path and the
evaluation rebuilds, the test checks that

* no Laplace-family draw happens outside a mechanism, and each is at that mechanism's scale
  (the lattice sampler's inner integer draw at scale / lattice);
* uniform draws happen only inside an exponential mechanism;
* `release.mechanisms` is exactly the set of objects that drew (by identity, first-draw order);
* the accountant's cost is at most epsilon, and equal to it except where a method is known to
  leave budget unused: HTF's split-search budget of the levels below its last split (the tree
  never reaches them), stated and checked exactly.
"""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest

from core.privacy import DRAWING, Accountant, Cost, Exponential, LatticeLaplace, Noise
from core.spatial.evaluate import compare
from core.spatial.htf import build_htf
from core.spatial.methods import METHODS, VARIANTS, get_method
from core.spatial.release import charge_rows
from core.spatial.unit import PersonUnit

ALL = sorted({*METHODS, *VARIANTS})
EXTRA = {  # code paths the defaults do not reach
    "htf-exhaustive": partial(build_htf, split_search="exhaustive", height=6),
    "htf-combine-structural": partial(build_htf, combine_pruned=True, stop_cells=40),
    "kdtree-early-stop": partial(get_method("kdtree-geo"), early_stop=32.0),
    "kdtree-hybrid": partial(get_method("kdtree-uniform"), switch_level=2),
}


class Draws:
    """Records (mechanism, sampler, scale) for every sampler call."""

    def __init__(self):
        self.calls: list[tuple[object, str, float | None]] = []

    def install(self, monkeypatch) -> None:
        original = {n: getattr(Noise, n) for n in ("laplace", "discrete_laplace",
                                                  "lattice_laplace", "uniform")}  # fmt: skip

        def wrap(name):
            def patched(noise, *args, **kwargs):
                scale = None if name == "uniform" else float(args[0] if args else kwargs["scale"])
                self.calls.append((DRAWING.get(), name, scale))
                return original[name](noise, *args, **kwargs)

            return patched

        for name in original:
            monkeypatch.setattr(Noise, name, wrap(name))

    def check_scales(self, workload_uniform: bool = False) -> list:
        """Every draw inside a mechanism and at its scale; returns the mechanisms that drew.
        `workload_uniform`: uniform draws outside mechanisms are the evaluation's random query
        rectangles (not a statistic of the data), allowed there only."""
        drew: list = []
        for mech, name, scale in self.calls:
            if mech is None and name == "uniform" and workload_uniform:
                continue
            assert mech is not None, f"a {name} draw outside any mechanism"
            if name == "uniform":
                assert isinstance(mech, Exponential), f"uniform draw inside {mech.label}"
            elif name == "discrete_laplace" and isinstance(mech, LatticeLaplace):
                assert scale == pytest.approx(mech.scale / mech.lattice, rel=1e-12), mech.label
            else:
                assert scale == pytest.approx(mech.scale, rel=1e-12), mech.label
            if not any(m is mech for m in drew):
                drew.append(mech)
        return drew


def grid() -> np.ndarray:
    """A 96 x 80 grid: a dense cluster, a second one and a sparse background (seeded)."""
    rng = np.random.default_rng(21)
    F = rng.poisson(0.3, size=(96, 80))
    F[20:34, 10:30] += rng.poisson(25, size=(14, 20))
    F[60:70, 50:75] += rng.poisson(8, size=(10, 25))
    return F.astype(np.int64)


def unused_split_budget(rel) -> float:
    """HTF: eps_prt_level for each planned split level that no mechanism drew for."""
    if not rel.method.startswith("htf"):
        return 0.0
    planned = {m.label for m in rel.planned if "split search" in m.label}
    drawn = {m.label for m in rel.mechanisms} | {
        lab for m in rel.mechanisms for lab in m.in_place_of
    }
    return len(planned - drawn) * rel.params["eps_prt_level"]


def build_and_check(builder, F, eps, monkeypatch, **kw):
    draws = Draws()
    draws.install(monkeypatch)
    a = Accountant(Noise.seeded(5), Cost(eps))
    rel = builder(F, eps, a, **kw)
    drew = draws.check_scales()
    assert len(rel.mechanisms) == len(drew)
    assert all(m is d for m, d in zip(rel.mechanisms, drew, strict=True))
    assert rel.mechanisms == a.mechanisms
    spent = a.spent.epsilon
    assert spent <= eps * (1 + 1e-12)
    assert spent == pytest.approx(eps - unused_split_budget(rel), rel=1e-12)
    rows = charge_rows(rel)  # what a registry records: the same objects, shares adding up
    assert [r["label"] for r in rows] == [m.label for m in rel.mechanisms]
    assert sum(r["charged_epsilon"] for r in rows) == pytest.approx(spent, rel=1e-12)
    return rel


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("eps", [0.1, 1.0])
def test_every_method_draws_only_through_its_mechanisms(name, eps, monkeypatch):
    build_and_check(get_method(name), grid(), eps, monkeypatch)


@pytest.mark.parametrize("name", sorted(EXTRA))
def test_other_code_paths_draw_only_through_their_mechanisms(name, monkeypatch):
    rel = build_and_check(EXTRA[name], grid(), 0.5, monkeypatch)
    if name == "htf-exhaustive":
        assert any(m.in_place_of for m in rel.mechanisms if "exhaustive" in m.label)
    if name == "htf-combine-structural":
        assert any("structural" in m.label for m in rel.mechanisms)
    if name == "kdtree-early-stop":
        assert any("re-measure" in m.label for m in rel.mechanisms)


@pytest.mark.parametrize("name", ["htf", "htf+", "ug", "ag", "kdtree-geo", "quadtree",
                                  "privtree", "identity", "uniform", "privelet", "auto"])  # fmt: skip
def test_a_person_unit_scales_every_sensitivity_by_k(name, monkeypatch):
    unit = PersonUnit("user", 4)
    rel = build_and_check(get_method(name), grid(), 1.0, monkeypatch, unit=unit)
    point = get_method(name)(grid(), 1.0, Accountant(Noise.seeded(5)))
    same = {m.label: m for m in point.mechanisms}
    for m in rel.mechanisms:
        if m.label in same:  # the same statistic at point level: sensitivity exactly K times
            assert m.sensitivity == pytest.approx(4 * same[m.label].sensitivity, rel=1e-12)
    assert len(set(same) & {m.label for m in rel.mechanisms}) >= 1
    assert rel.unit == unit


def test_the_charged_build_path_records_what_drew(monkeypatch):
    draws = Draws()
    draws.install(monkeypatch)
    from core.governance import Role
    from core.governance.location import release_methods
    from core.spatial.grid import Grid
    from core.spatial.pipeline import Prepared as Binned
    from core.spatial.service import LocationParams, prepare

    F = grid()
    box = Grid(F.shape[0], F.shape[1], (0.0, 0.0, 1.0, 1.0))
    prepared = [prepare(LocationParams(m, 0.3, box.bbox, box.ny, box.nx)) for m in ALL]
    data = Binned(F, box, int(F.sum()), 0, False, "lat", "lon")
    built = release_methods(None, Role.OWNER, None, prepared, data, lambda m: Noise.seeded(3))
    drew = draws.check_scales()
    recorded = [m for b in built for m in b.release.mechanisms]
    assert len(recorded) == len(drew) and all(m is d for m, d in zip(recorded, drew, strict=True))


def test_evaluation_rebuilds_draw_only_through_mechanisms(monkeypatch):
    draws = Draws()
    draws.install(monkeypatch)
    comp = compare(grid(), 0.5, ALL, n_queries=20, reps=2, seed=1, keep_releases=True)
    drew = draws.check_scales(workload_uniform=True)
    assert any(name != "uniform" for _, name, _ in draws.calls)
    last = [m for name in ALL for m in comp.releases[name].mechanisms]
    assert all(any(m is d for d in drew) for m in last)
