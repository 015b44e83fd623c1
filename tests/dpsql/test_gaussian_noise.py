"""DP SQL with `noise = 'gaussian'` (issue 33): counts and sums draw through discrete Gaussian
objects calibrated to the L2 sensitivity √C_u·Δ that contribution bounding leaves, the charge
is theirs, the intervals are their quantiles, and neighbouring datasets move the noised vector
by no more than the stated sensitivity."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from core.cli import main
from core.dpsql.execute.engine import Engine
from core.dpsql.service import explain, prepare, run
from core.errors import InputError
from core.privacy import Accountant, Cost, DiscreteGaussian, DiscreteLaplace, Noise

CU = 10


def query(noise: str, cu: int = CU, extra: str = "") -> str:
    return (
        "SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 1, delta = 1e-6, "
        f"max_groups_contributed = {cu}, privacy_unit_column = uid, noise = '{noise}'{extra}) "
        "g, COUNT(*, contribution_bounds_per_group => (0, 2)) AS c, "
        "SUM(x, contribution_bounds_per_group => (0, 10)) AS s FROM t GROUP BY g"
    )


def frame(units: int = 300, seed: int = 5) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = units * 12
    return pd.DataFrame(
        {
            "uid": np.repeat(np.arange(units), 12),
            "g": rng.integers(0, 15, rows),
            "x": rng.uniform(0, 10, rows).round(3),
        }
    )


@pytest.fixture
def catalog(catalog_of):
    return catalog_of({"t": frame()})


def test_counts_and_sums_are_gaussian_at_l2_sensitivity(catalog):
    p = prepare(query("gaussian"), catalog, Noise.seeded(0))
    gauss = [m for m in p.mechanisms if isinstance(m, DiscreteGaussian)]
    assert len(gauss) == 2
    stats = {s.component.value: s for s in p.plan.statistics}
    for s in stats.values():
        assert s.mechanism.sensitivity == pytest.approx(math.sqrt(CU) * s.sensitivity)
        assert s.mechanism.sensitivity >= math.sqrt(CU) * s.sensitivity  # never understated
    threshold = p.plan.selection.mechanism
    assert threshold.reuses is None and threshold.delta == pytest.approx(0.5e-6)
    assert [m.cost.delta for m in gauss] == pytest.approx([0.25e-6, 0.25e-6])
    assert p.cost.epsilon == pytest.approx(1.0) and p.cost.delta == pytest.approx(1e-6)
    assert p.plan.threshold_info().delta == threshold.delta


def test_the_charge_is_what_drew_and_intervals_are_gaussian_quantiles(catalog):
    p = prepare(query("gaussian"), catalog, Noise.seeded(0))
    acc = Accountant(Noise.seeded(1), budget=p.cost)
    result = run(p, Engine(catalog), acc)
    assert acc.mechanisms == p.mechanisms
    assert acc.spent == p.cost == Cost.of(p.mechanisms)
    assert {m["kind"] for m in result.to_dict()["mechanisms"]} >= {"discrete Gaussian"}
    c = next(s for s in p.plan.statistics if s.component.value == "count")
    width = c.mechanism.half_width(0.95) / 2.0**c.exponent
    assert explain(p)["half_widths_95"]["c"] == width
    assert all(h == pytest.approx(width) for h in result.ci95["c"] if h is not None)


def test_gaussian_interval_is_narrower_than_laplace_at_cu_10(catalog):
    widths = {
        noise: explain(prepare(query(noise), catalog, Noise.seeded(0)))["half_widths_95"]
        for noise in ("laplace", "gaussian")
    }
    assert widths["gaussian"]["c"] < widths["laplace"]["c"]
    assert widths["gaussian"]["s"] < widths["laplace"]["s"]
    laplace = prepare(query("laplace"), catalog, Noise.seeded(0))
    assert all(isinstance(m, DiscreteLaplace) for m in laplace.mechanisms[1:])


def test_neighbouring_datasets_move_the_vector_within_the_l2_sensitivity(catalog_of):
    """Remove one unit that touches all C_u groups: the exact per-group statistics (the vector
    the Gaussian noises) move by at most the mechanism's L2 sensitivity (PUBLIC_GROUPS keeps
    the same partitions on both sides; the same salt keeps the same sampling)."""
    data = frame()
    data.loc[data.uid == 0, "g"] = np.arange(12) % 15  # unit 0 in 12 groups: capped at C_u
    public = pd.DataFrame({"g": np.arange(15)})
    sql = (
        query("gaussian", extra=", group_selection_strategy = PUBLIC_GROUPS")
        .replace(") g,", ") G.g,")
        .replace("FROM t GROUP BY g", "FROM t JOIN groups G ON t.g = G.g GROUP BY G.g")
    )
    vectors = []
    for d in (data, data[data.uid != 0]):
        cat = catalog_of({"t": d}, public={"groups": public})
        p = prepare(sql, cat, Noise.seeded(42))
        vectors.append(Engine(cat).frame(p.executed_sql).sort_values("k0"))
    stats = {s.column: s for s in p.plan.statistics}
    for column, s in stats.items():
        a, b = (v[column].fillna(0).to_numpy(dtype=float) for v in vectors)
        assert np.linalg.norm(a - b) <= s.mechanism.sensitivity + 1e-9
        assert np.abs(a - b).max() <= s.sensitivity


def test_options_refuse_unknown_noise_and_gaussian_without_delta(catalog):
    with pytest.raises(InputError, match="DPX-V033 noise = cauchy"):
        prepare(query("cauchy"), catalog, Noise.seeded(0))
    public = (
        query("gaussian")
        .replace("delta = 1e-6", "delta = 0")
        .replace(
            "noise = 'gaussian'", "noise = 'gaussian', group_selection_strategy = PUBLIC_GROUPS"
        )
    )
    with pytest.raises(InputError, match="needs delta > 0"):
        prepare(public, catalog, Noise.seeded(0))


def test_cli_noise_flag(tmp_path, capsys):
    frame().to_csv(tmp_path / "t.csv", index=False)
    sql = query("laplace").replace(", noise = 'laplace'", "")
    argv = ["sql", "--table", f"t={tmp_path / 't.csv'}", "--uid", "uid", "--query", sql,
            "--seed", "1", "--json", "--noise", "gaussian"]  # fmt: skip
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    kinds = [m["kind"] for m in out["mechanisms"]]
    assert kinds.count("discrete Gaussian") == 2
    assert out["epsilon_spent"] == pytest.approx(1) and out["delta_spent"] == pytest.approx(1e-6)
    assert main([*argv[:-1], "cauchy"]) == 2
    assert "invalid choice" in capsys.readouterr().err
