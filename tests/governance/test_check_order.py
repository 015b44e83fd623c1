"""Checks come before the charge, on every tool's door — and the test that says so can fail
(issue 28.5). Each tool is driven through `dpx` on a registered dataset with requests the
policies refuse before anything is read (seeded noise on a dataset not flagged for teaching, an
ε above the per-query cap): nothing is charged. Then the governed flow is mutated so that its
checks run after the charge: those refusals still charge nothing (the registry refuses them
again in its own transaction), and a check only the flow makes is caught leaving a charge.
Checks made by a tool's `prepare` come before any request exists, so no flow reordering can move
them."""

from __future__ import annotations

import pytest

import core.governance.flow as flow
from core.cli import main
from core.registry import Registry

POINTS = "uid,lat,lon,SA\n" + "".join(
    f"{i % 40},{48.8 + (i % 17) / 1e3},{2.3 + (i % 13) / 1e3},{'abc'[i % 3]}\n" for i in range(300)
)
BBOX = "--bbox=2.29,48.79,2.32,48.82"
QUERY = "SELECT WITH ANONYMIZATION SA, ANON_COUNT(*, 5) AS n FROM t GROUP BY SA"
TOOLS = {
    "location": ["release", "--dataset", "d", "--method", "ug", "--epsilon", "{e}", BBOX,
                 "--max-points-per-person", "5", "--out", "{o}.geojson"],
    "pp": ["balance", "--dataset", "d", "--sa", "SA", "--rho1", "1/3", "--rho2", "2/3",
           "--perturb", "--categories", "a,b,c", "--plan-epsilon", "{e}", "--out", "{o}.csv"],
    "sql": ["sql", "--dataset", "d", "--epsilon", "{e}", "--query", QUERY],
}  # fmt: skip
CAP = 0.5  # the dataset's per-query ε cap
REFUSALS = {  # a request the policies refuse: its ε and extra arguments
    "seeded noise on a non-teaching dataset": ("0.1", ["--seed", "1"]),
    "epsilon above the per-query cap": ("1", []),
}


@pytest.fixture
def dataset(tmp_path, monkeypatch):
    monkeypatch.setenv("DPX_MODE", "owner")
    monkeypatch.setenv("DPX_REGISTRY", str(tmp_path / "reg"))
    path = tmp_path / "points.csv"
    path.write_text(POINTS)
    assert main(["dataset", "add", "d", "--table", f"t={path}", "--uid", "uid",
                 "--epsilon", "10", "--delta", "1e-4",
                 "--max-epsilon-per-query", str(CAP)]) == 0  # fmt: skip
    return tmp_path


def _refused_run(tmp_path, capsys, tool: str, refusal: str) -> list:
    """Run the refused request; return what the registry charged for it."""
    epsilon, extra = REFUSALS[refusal]
    argv = [a.format(e=epsilon, o=tmp_path / "out") for a in TOOLS[tool]] + extra
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2, err
    return Registry(tmp_path / "reg").releases("d")


def _checks_after_the_charge(monkeypatch) -> None:
    """The mutation: the flow's checks no longer run before the charge, but inside the
    computation that follows it."""
    checks = flow.check_policies
    compute = flow._compute
    monkeypatch.setattr(flow, "check_policies", lambda request: None)

    def checks_then_compute(registry, release, request, work, accountant):
        if accountant is not None:  # the computation proper, after the charge
            checks(request)
        return compute(registry, release, request, work, accountant)

    monkeypatch.setattr(flow, "_compute", checks_then_compute)


@pytest.mark.parametrize("refusal", sorted(REFUSALS))
@pytest.mark.parametrize("tool", sorted(TOOLS))
def test_a_refused_request_charges_nothing(dataset, capsys, tool, refusal):
    assert _refused_run(dataset, capsys, tool, refusal) == []
    assert Registry(dataset / "reg").spent("d") == (0.0, 0.0)


@pytest.mark.parametrize("refusal", sorted(REFUSALS))
@pytest.mark.parametrize("tool", sorted(TOOLS))
def test_the_registry_refuses_them_again_if_the_flow_checked_late(
    dataset, capsys, monkeypatch, tool, refusal
):
    """Defence in depth: with the flow's checks moved after the charge, these refusals still
    charge nothing — the registry's own transaction refuses an ε above the cap and seeded
    noise on a dataset not flagged for teaching."""
    _checks_after_the_charge(monkeypatch)
    assert _refused_run(dataset, capsys, tool, refusal) == []


def test_a_check_the_request_carries_moved_after_the_charge_is_caught(tmp_path, capsys,
                                                                       monkeypatch):  # fmt: skip
    """A check only the flow makes (the location request's: the named columns are in the file)
    leaves no charge when it refuses; moved after the charge, it leaves one — so the first
    assertion is one a reordering of the flow would fail."""
    monkeypatch.setenv("DPX_MODE", "owner")
    path = tmp_path / "points.csv"
    path.write_text(POINTS)
    argv = ["release", str(path), "--lat", "not_a_column", "--lon", "lon", "--method", "ug",
            "--epsilon", "1", BBOX, "--out", str(tmp_path / "o.geojson")]  # fmt: skip

    def charged(registry) -> list:
        monkeypatch.setenv("DPX_REGISTRY", str(registry))
        assert main(argv) == 2, capsys.readouterr().err
        return Registry(registry).releases() if registry.exists() else []

    assert charged(tmp_path / "in-order") == []
    _checks_after_the_charge(monkeypatch)
    assert len(charged(tmp_path / "mutated")) == 1
