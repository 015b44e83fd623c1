"""The registry's mechanism rows are the mechanisms that drew the noise (issue 16, Done when).

Every tool's release runs end to end through `dpx ... --dataset` (the governed flow, the
registry, the record read back typed) while the draws are instrumented independently of the
accountant and of the registry:

* every call into a mechanism's noise (`Accountant.drawing`) and every PP sub-table
  randomization (`PPRandomization.draw_partitioned`) records the mechanism objects that drew;
* every Laplace-family sampler call records the mechanism under way (`core.privacy.DRAWING`)
  and the scale it was asked for: none may happen outside a mechanism, and each is at that
  mechanism's scale (the lattice sampler's integer draw at scale / lattice).

Then the release's registry rows, read back typed, must equal the objects that drew: the same
kinds, labels, costs, sensitivities and scales, in the order they first drew, and the charge
recorded for the release covers them.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from core.cli import main
from core.privacy import DRAWING, Accountant, Noise, PPRandomization, same_mechanism
from core.privacy.mechanisms import LatticeLaplace
from core.registry import Registry

BBOX = "--bbox=-118.5,33.7,-117.9,34.3"
QUERY = (
    "SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 1, delta = 1e-6, "
    "max_groups_contributed = 1) dept, COUNT(*) AS c, "
    "SUM(amount, contribution_bounds_per_group => (0, 100)) AS s FROM t GROUP BY dept"
)
RELEASES = {
    "location auto": ["release", "--dataset", "d", "--method", "auto", BBOX, "--epsilon", "1",
                      "--max-points-per-person", "1"],
    "location ug": ["release", "--dataset", "d", "--method", "ug", BBOX, "--epsilon", "1",
                    "--max-points-per-person", "1"],
    "htf": ["htf", "--dataset", "d", BBOX, "--epsilon", "1", "--max-points-per-person", "1"],
    "sql": ["sql", "--dataset", "d", "--query", QUERY],
    "pp": ["balance", "--dataset", "d", "--sa", "sa", "--rho1", "0.3", "--rho2", "0.6",
           "--perturb", "--out", "OUT"],
    "bounds": ["plan", "bounds", "--dataset", "d", "--column", "amount"],
}  # fmt: skip


@pytest.fixture
def dataset(tmp_path, registry_dir, capsys):
    rng = np.random.default_rng(1)
    n = 3000
    pd.DataFrame(
        {
            "person": np.arange(n),
            "lat": 34 + rng.normal(0, 0.05, n),
            "lon": -118.2 + rng.normal(0, 0.05, n),
            "dept": rng.choice(["a", "b", "c"], n),
            "amount": rng.uniform(0, 100, n),
            "sa": rng.choice(["x", "y", "z", "w"], n, p=[0.4, 0.3, 0.2, 0.1]),
            "precinct": rng.integers(1, 5, n),
        }
    ).to_csv(tmp_path / "t.csv", index=False)
    argv = ["dataset", "add", "d", "--table", f"t={tmp_path / 't.csv'}", "--uid", "person",
            "--epsilon", "100", "--delta", "1e-3", "--pp-columns", "precinct"]  # fmt: skip
    assert main(argv) == 0, capsys.readouterr().err
    capsys.readouterr()
    return tmp_path


class Draws:
    """What drew, recorded at the draw itself (not from the accountant's list)."""

    def __init__(self, monkeypatch):
        self.mechanisms: list = []
        self.samples: list[tuple[object, str, float]] = []
        drawing = Accountant.drawing
        partitioned = PPRandomization.draw_partitioned

        def record(m):
            if all(m is not seen for seen in self.mechanisms):
                self.mechanisms.append(m)

        def spy_drawing(accountant, mechanism):
            record(mechanism)
            return drawing(accountant, mechanism)

        def spy_partitioned(accountant, mechanisms, sub_ids, local_codes):
            for m in mechanisms:
                record(m)
            return partitioned(accountant, mechanisms, sub_ids, local_codes)

        monkeypatch.setattr(Accountant, "drawing", spy_drawing)
        monkeypatch.setattr(PPRandomization, "draw_partitioned", staticmethod(spy_partitioned))
        for name in ("laplace", "discrete_laplace", "lattice_laplace"):
            original = getattr(Noise, name)

            def sampler(noise, *args, _name=name, _original=original, **kwargs):
                scale = float(args[0] if args else kwargs["scale"])
                self.samples.append((DRAWING.get(), _name, scale))
                return _original(noise, *args, **kwargs)

            monkeypatch.setattr(Noise, name, sampler)


@pytest.mark.parametrize("name", list(RELEASES))
def test_registry_rows_equal_the_mechanisms_that_drew(name, dataset, capsys, monkeypatch):
    argv = [str(dataset / "pub.csv") if a == "OUT" else a for a in RELEASES[name]]
    draws = Draws(monkeypatch)
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 0, err
    release = Registry().releases("d")[-1]
    assert release.charged and release.artefact is not None

    assert draws.mechanisms, "the release drew no noise"
    for mechanism, sampler, scale in draws.samples:
        assert mechanism is not None, f"a {sampler} draw outside any mechanism"
        expected = mechanism.scale
        if isinstance(mechanism, LatticeLaplace) and sampler == "discrete_laplace":
            expected = mechanism.scale / mechanism.lattice
        assert scale == pytest.approx(expected, rel=1e-12), (mechanism.label, sampler)

    rows = list(release.mechanisms)
    assert [m.label for m in rows] == [m.label for m in draws.mechanisms]
    for row, drew in zip(rows, draws.mechanisms, strict=True):
        assert type(row) is type(drew) and same_mechanism(row, drew), row.label
    # What drew never exceeds what was charged (a replacement spends a planned share).
    own = [m.cost for m in draws.mechanisms if not m.in_place_of]
    assert sum(c.epsilon for c in own) <= release.epsilon * (1 + 1e-9)
    assert sum(c.delta for c in own) <= release.delta * (1 + 1e-9) + 1e-15
