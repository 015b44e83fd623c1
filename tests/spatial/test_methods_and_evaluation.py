"""The method registry and the MRE comparison (spec htf.md §5.3, §6 determinism)."""

import dataclasses

import numpy as np
import pytest

from core.errors import InputError
from core.privacy import Accountant, Cost, Noise
from core.spatial.evaluate import compare, stream
from core.spatial.methods import METHODS, VARIANTS, get_method, method, parse_methods
from core.spatial.release import paint
from core.spatial.service import HTFOptions

NINE = {
    "htf",
    "identity",
    "uniform",
    "ug",
    "ag",
    "kdtree-geo",
    "kdtree-uniform",
    "quadtree",
    "privtree",
}


def _F(seed=0, ny=40, nx=56):
    rng = np.random.default_rng(seed)
    F = rng.poisson(0.5, size=(ny, nx))
    F[5:15, 10:30] += rng.poisson(20, size=(10, 20))
    return F


def test_registry_lists_the_nine_methods_optional_privelet_and_the_peers():
    assert set(METHODS) == NINE | {"privelet", "dawa", "hb"}


@pytest.mark.parametrize("name", sorted(set(METHODS) | set(VARIANTS)))
def test_every_method_tiles_the_grid_and_spends_epsilon(name):
    F = _F()
    led = Accountant(Noise.seeded(3), Cost(0.7))
    rel = get_method(name)(F, 0.7, led)
    assert np.allclose(paint(rel.leaves, np.ones(rel.n_leaves), *F.shape), 1.0)
    assert rel.cells_per_leaf().sum() == F.size
    assert rel.mechanisms == led.mechanisms
    assert led.spent.epsilon <= 0.7 + 1e-12
    if not name.startswith("htf"):  # HTF: split levels below its last split never draw
        assert abs(led.spent.epsilon - 0.7) <= 1e-12
    parts = sum(v for k, v in rel.epsilon.items() if k != "total")
    assert abs(parts - rel.epsilon["total"]) <= 1e-12


def test_variant_params_keep_their_own_flags():
    """`HTFOptions.keywords`: "htf" takes every option, a variant only those its row lists (its
    own §2.10 flags stay), a method without options none."""
    htf = HTFOptions(T=2)
    assert htf.keywords(method("htf")) == dataclasses.asdict(htf)
    plus = htf.keywords(method("htf+"))
    assert plus["T"] == 2 and not {"combine_pruned", "consistency", "cap_height"} & set(plus)
    assert htf.keywords(method("ug")) == {}
    rel = get_method("htf+")(_F(), 1.0, Accountant(Noise.seeded(1)), **plus)
    assert rel.info["modified"] == ["combine_pruned", "consistency"] and rel.params["T"] == 2


def test_compare_rebuilds_with_the_typed_htf_options():
    """The evaluation's rebuilds take the page's `HTFOptions` (each method the ones its row
    lists); without options every builder keeps its defaults."""
    htf = HTFOptions(T=HTFOptions().T + 1, combine_pruned=True)
    comp = compare(_F(), 1.0, ["htf", "htf+", "ug"], n_queries=20, reps=1, seed=3, htf=htf,
                   keep_releases=True)  # fmt: skip
    assert comp.releases["htf"].params["T"] == htf.T
    assert comp.releases["htf"].info["modified"] == ["combine_pruned"]
    assert comp.releases["htf+"].params["T"] == htf.T
    assert comp.releases["htf+"].info["modified"] == ["combine_pruned", "consistency"]
    plain = compare(_F(), 1.0, ["htf"], n_queries=20, reps=1, seed=3, keep_releases=True)
    assert plain.releases["htf"].params["T"] == HTFOptions().T
    assert comp.settings == dataclasses.replace(plain.settings, methods=("htf", "htf+", "ug"))
    assert comp.to_dict()["params"] == comp.settings.to_json()


def test_parse_methods():
    assert parse_methods("htf, ug,htf") == ["htf", "ug"]
    with pytest.raises(InputError):
        parse_methods("htf,nope")
    with pytest.raises(InputError):
        parse_methods(" , ")


def test_results_do_not_depend_on_method_order():
    F = _F(1)
    a = compare(F, 0.5, ["htf", "ug", "privtree"], n_queries=200, reps=2, seed=9)
    b = compare(F, 0.5, ["privtree", "htf", "ug"], n_queries=200, reps=2, seed=9)
    key = lambda rows: sorted((r["method"], r["query_size"], r["mre"], r["mre_std"]) for r in rows)  # noqa: E731
    assert key(a.rows) == key(b.rows)
    c = compare(F, 0.5, ["htf", "ug", "privtree"], n_queries=200, reps=2, seed=10)
    assert key(a.rows) != key(c.rows)


def test_comparison_rows_and_statistics():
    F = _F(2)
    comp = compare(
        F,
        1.0,
        ["uniform", "identity"],
        sizes=(0.05, 0.2),
        n_queries=300,
        reps=3,
        seed=1,
        keep_releases=True,
    )
    assert [(r["method"], r["query_size"]) for r in comp.rows] == [
        ("uniform", 0.05), ("uniform", 0.2), ("identity", 0.05), ("identity", 0.2)
    ]  # fmt: skip
    assert all(r["mre_std"] is not None and r["mre_std"] >= 0 for r in comp.rows)
    assert set(comp.releases) == {"uniform", "identity"}
    one = compare(F, 1.0, ["uniform"], n_queries=50, reps=1, seed=1)
    assert one.rows[0]["mre_std"] is None  # std over one repetition is undefined
    assert 0 <= comp.workload[0]["fraction_empty"] <= 1


def test_huge_epsilon_identity_is_exact():
    F = _F(3)
    comp = compare(F, 1e9, ["identity"], n_queries=100, reps=1, seed=2)
    assert comp.rows[0]["mre"] == pytest.approx(0.0, abs=1e-9)


@pytest.mark.parametrize("name", sorted(NINE))
def test_huge_epsilon_raster_sums_to_n(name):
    F = _F(4)
    rel = get_method(name)(F, 1e9, Accountant(Noise.seeded(2)))
    assert rel.density_raster(*F.shape).sum() == pytest.approx(F.sum(), abs=1e-3)


def test_streams_are_stable_and_distinct():
    a = stream(5, 0, "htf").laplace(1.0, size=3)
    assert np.array_equal(a, stream(5, 0, "htf").laplace(1.0, size=3))
    assert not np.array_equal(a, stream(5, 1, "htf").laplace(1.0, size=3))
    assert not np.array_equal(a, stream(5, 0, "ug").laplace(1.0, size=3))
    assert stream(None, 0, "htf").is_secure
