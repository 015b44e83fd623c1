"""The `dpx` entry point: version, demos, datasets/registry contract, exit codes, errors."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from core import __version__
from core.cli import main
from tests.registry.helpers import BBOX, QUERY, write_points


def test_version(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.strip() == f"dpx {__version__}"


def test_importing_the_cli_loads_no_capability_library():
    code = (
        "import sys, core.cli\n"
        "heavy = {'duckdb', 'sqlglot', 'opendp', 'pandas', 'numpy'} & set(sys.modules)\n"
        "print(sorted(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_demos_json_lists_registered_demos(capsys):
    from core.data import all_demos

    assert main(["demos", "--json"]) == 0
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert [d["name"] for d in out["datasets"]] == [d.name for d in all_demos()]
    for d in out["datasets"]:
        assert d["licence"] and d["description"] and d["kind"] in {"points", "table", "sql"}
    assert captured.err == ""


def test_datasets_is_a_deprecated_alias_of_demos(capsys):
    assert main(["demos", "--json"]) == 0
    demos = capsys.readouterr().out
    assert main(["datasets", "--json"]) == 0
    captured = capsys.readouterr()
    assert captured.out == demos
    assert "deprecated" in captured.err and "dpx demos" in captured.err


def test_usage_error_exits_2_with_one_line_and_no_traceback(capsys):
    assert main(["no-such-command"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dpx: error:") and "invalid choice" in err
    assert "Traceback" not in err and err.count("\n") == 1


def test_no_command_prints_help_and_exits_2(capsys):
    assert main([]) == 2
    assert "usage: dpx" in capsys.readouterr().out


def test_installed_console_script_runs():
    dpx = Path(sys.executable).parent / "dpx"
    assert dpx.exists(), "the dpx console script is not installed in this environment"
    result = subprocess.run(
        [str(dpx), "demos", "--json"], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert "datasets" in json.loads(result.stdout)


# -- the registry contract ---------------------------------------------------------------------
def _json(capsys, argv) -> dict:
    code = main([*argv, "--json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return json.loads(captured.out)


def _fail(capsys, argv) -> str:
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.startswith("dpx: error:") and err.count("\n") == 1 and "Traceback" not in err
    return err


@pytest.fixture
def points(tmp_path) -> Path:
    return write_points(tmp_path / "pts.csv")


def _add(capsys, points, name="pts", *extra):
    return _json(
        capsys,
        ["dataset", "add", name, "--table", f"t={points}", "--uid", "uid", "--epsilon", "3",
         "--delta", "1e-5", *extra],
    )  # fmt: skip


def test_dataset_add_show_list_contract(capsys, registry_dir, points):
    added = _add(capsys, points)
    shown = _json(capsys, ["dataset", "show", "pts"])
    for key in ("name", "epsilon_total", "epsilon_spent", "delta_total", "delta_spent", "releases"):
        assert key in shown
    assert (shown["name"], shown["epsilon_total"], shown["epsilon_spent"]) == ("pts", 3.0, 0.0)
    assert shown["delta_total"] == 1e-5 and shown["releases"] == [] and added == shown
    listed = _json(capsys, ["dataset", "list"])
    assert [d["name"] for d in listed["datasets"]] == ["pts"]
    assert (registry_dir / "registry.sqlite").is_file()


def test_registry_flag_overrides_the_environment(capsys, registry_dir, points, tmp_path):
    other = tmp_path / "other-registry"
    _json(capsys, ["dataset", "add", "x", "--table", f"t={points}", "--uid", "uid", "--epsilon", "1",
                   "--registry", str(other)])  # fmt: skip
    assert [
        d["name"] for d in _json(capsys, ["dataset", "list", "--registry", str(other)])["datasets"]
    ] == ["x"]
    assert _json(capsys, ["dataset", "list"])["datasets"] == []


def test_sql_htf_balance_charge_one_persistent_budget(capsys, registry_dir, points):
    _add(capsys, points)
    sql = _json(capsys, ["sql", "--dataset", "pts", "--query", QUERY.format(eps=1)])
    assert sql["registry"]["epsilon_remaining"] == pytest.approx(2.0)
    htf = _json(
        capsys,
        ["htf", "--dataset", "pts", "--max-points-per-person", "1", BBOX, "--epsilon", "1.5"],
    )
    assert htf["registry"]["kind"] == "release"
    # the exact plan is the owner's view: nothing charged, nothing recorded
    plan = _json(
        capsys, ["balance", "--dataset", "pts", "--sa", "sa", "--rho1", "0.3", "--rho2", "0.7"]
    )
    assert "registry" not in plan and plan["plan"].startswith("exact plan")
    shown = _json(capsys, ["dataset", "show", "pts"])
    assert shown["epsilon_spent"] == pytest.approx(2.5) and shown["delta_spent"] == pytest.approx(
        1e-6
    )
    assert [(r["tool"], r["epsilon"], r["mode"]) for r in shown["releases"]] == [
        ("sql", 1.0, "secure"), ("location", 1.5, "secure"),
    ]  # fmt: skip
    assert {"id", "tool", "epsilon", "delta", "time", "mode"} <= set(shown["releases"][0])
    # over budget: exit 2, remaining in the message, a refusal recorded, nothing charged
    err = _fail(
        capsys, ["htf", "--dataset", "pts", "--max-points-per-person", "1", BBOX, "--epsilon", "1"]
    )
    assert "remaining epsilon 0.5 of 3" in err
    err = _fail(capsys, ["sql", "--dataset", "pts", "--query", QUERY.format(eps=1)])
    assert "DPX-B001" in err and "remaining epsilon 0.5 of 3" in err
    shown = _json(capsys, ["dataset", "show", "pts"])
    assert shown["epsilon_spent"] == pytest.approx(2.5) and shown["refusals"] == 2


def test_over_cap_is_refused_with_the_remaining_budget(capsys, registry_dir, points):
    _add(capsys, points, "pts", "--max-epsilon-per-query", "0.5")
    err = _fail(capsys, ["sql", "--dataset", "pts", "--query", QUERY.format(eps=1)])
    assert "max_epsilon_per_query = 0.5" in err and "remaining epsilon 3 of 3" in err
    err = _fail(
        capsys, ["htf", "--dataset", "pts", "--max-points-per-person", "1", BBOX, "--epsilon", "1"]
    )
    assert "max_epsilon_per_query = 0.5" in err and "remaining epsilon 3 of 3" in err
    assert _json(capsys, ["dataset", "show", "pts"])["refusals"] == 2


def test_budget_command_raises_total_and_keeps_history(capsys, registry_dir, points):
    _add(capsys, points)
    _json(
        capsys, ["htf", "--dataset", "pts", "--max-points-per-person", "1", BBOX, "--epsilon", "3"]
    )
    _fail(
        capsys, ["htf", "--dataset", "pts", "--max-points-per-person", "1", BBOX, "--epsilon", "1"]
    )
    raised = _json(capsys, ["dataset", "budget", "pts", "--epsilon", "4"])
    assert raised["epsilon_total"] == 4.0 and raised["epsilon_spent"] == 3.0
    assert [(c["epsilon_before"], c["epsilon_after"]) for c in raised["budget_history"]] == [
        (3.0, 4.0)
    ]
    _json(
        capsys, ["htf", "--dataset", "pts", "--max-points-per-person", "1", BBOX, "--epsilon", "1"]
    )
    assert "no reset" in _fail(capsys, ["dataset", "budget", "pts", "--epsilon", "1"])


def test_changed_file_is_refused(capsys, registry_dir, points):
    _add(capsys, points)
    points.write_text(points.read_text() + "9999,34.0,-118.2,a\n")
    err = _fail(
        capsys, ["htf", "--dataset", "pts", "--max-points-per-person", "1", BBOX, "--epsilon", "1"]
    )
    assert "changed since registration" in err
    assert _json(capsys, ["dataset", "show", "pts"])["epsilon_spent"] == 0.0


def test_seeded_noise_refused_on_registered_data_unless_teaching(capsys, registry_dir, points):
    _add(capsys, points)
    assert "not flagged --teaching" in _fail(
        capsys,
        [
            "htf",
            "--dataset",
            "pts",
            "--max-points-per-person",
            "1",
            BBOX,
            "--epsilon",
            "1",
            "--seed",
            "1",
        ],
    )
    _add(capsys, points, "class", "--teaching")
    for _ in range(4):  # 4 x 1 > 3: demo runs are never counted as releases
        out = _json(
            capsys,
            [
                "htf",
                "--dataset",
                "class",
                "--max-points-per-person",
                "1",
                BBOX,
                "--epsilon",
                "1",
                "--seed",
                "1",
            ],
        )
        assert out["mode"] == "seeded"
    shown = _json(capsys, ["dataset", "show", "class"])
    assert (
        shown["epsilon_spent"] == 0.0 and shown["releases"] == [] and len(shown["demo_runs"]) == 4
    )


def test_unregistered_files_keep_working_and_are_recorded_not_limited(capsys, registry_dir, points):
    from core.registry import Registry, RunKind

    for _ in range(3):
        _json(capsys, ["sql", "--table", f"t={points}", "--uid", "uid", "--query",
                       QUERY.format(eps=1), "--budget-epsilon", "1"])  # fmt: skip
        _json(capsys, ["htf", str(points), BBOX, "--epsilon", "1"])
    runs = Registry(registry_dir).releases(kind=RunKind.UNREGISTERED)
    assert sorted(r.method or r.tool for r in runs) == ["htf"] * 3 + ["sql"] * 3


def test_charge_is_written_before_the_data_is_read(capsys, registry_dir, points, monkeypatch):
    """Whatever reads the points sees the charge already committed by another connection."""
    import core.spatial.scan as scan
    from core.registry import Registry

    _add(capsys, points)
    seen = []
    real = scan.scan_prepare  # the location tools read the points through the DuckDB scan

    def spy(*a, **k):
        seen.append(Registry(registry_dir).spent("pts")[0])
        return real(*a, **k)

    monkeypatch.setattr(scan, "scan_prepare", spy)
    _json(
        capsys, ["htf", "--dataset", "pts", "--max-points-per-person", "1", BBOX, "--epsilon", "2"]
    )
    assert seen == [2.0]
    _fail(
        capsys, ["htf", "--dataset", "pts", "--max-points-per-person", "1", BBOX, "--epsilon", "2"]
    )
    assert seen == [2.0]  # the refused request never read the data


def test_unknown_column_is_refused_before_charging(capsys, registry_dir, points):
    _add(capsys, points)
    err = _fail(
        capsys,
        [
            "htf",
            "--dataset",
            "pts",
            "--max-points-per-person",
            "1",
            BBOX,
            "--epsilon",
            "1",
            "--lat",
            "nope",
        ],
    )
    assert "latitude column 'nope' is not in the table" in err and "Nothing was charged" in err
    err = _fail(capsys, ["balance", "--dataset", "pts", "--sa", "nope", "--rho1", "0.3",
                         "--rho2", "0.7", "--perturb", "--out", "x.csv"])  # fmt: skip
    assert "sensitive attribute column 'nope'" in err
    shown = _json(capsys, ["dataset", "show", "pts"])
    assert shown["epsilon_spent"] == 0.0 and shown["releases"] == [] and shown["refusals"] == 2


def test_failed_computation_keeps_its_charge(capsys, registry_dir, points):
    _add(capsys, points)
    # the column exists (the header check passes) but holds text: the run fails after the charge
    err = _fail(
        capsys,
        [
            "htf",
            "--dataset",
            "pts",
            "--max-points-per-person",
            "1",
            BBOX,
            "--epsilon",
            "1",
            "--lat",
            "sa",
        ],
    )
    assert "stands" in err
    shown = _json(capsys, ["dataset", "show", "pts"])
    assert shown["epsilon_spent"] == 1.0 and shown["releases"][0]["status"] == "failed"


def test_dpx_release_is_recorded_under_its_method(capsys, registry_dir, points):
    _add(capsys, points)
    out = _json(
        capsys,
        [
            "release",
            "--dataset",
            "pts",
            "--max-points-per-person",
            "1",
            BBOX,
            "--epsilon",
            "1",
            "--method",
            "ug",
        ],
    )
    assert out["registry"]["epsilon_remaining"] == pytest.approx(2.0)
    shown = _json(capsys, ["dataset", "show", "pts"])
    assert [(r["tool"], r["method"], r["epsilon"]) for r in shown["releases"]] == [
        ("location", "ug", 1.0)
    ]
