"""Issue 28: one typed PP request for both front doors. `dpx balance --perturb` (argv ->
`core.cli.balance.pp_params`) and the PP page (widgets -> `ui.pp.params.page_params`) give
equal `PPPrepared` — mechanisms, cost, claim, unit, published columns — for a matrix of
options; the SA's categories declared in a dataset's schema are the default on both doors."""

from __future__ import annotations

import itertools
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from core.balancing.service import CategoriesFrom, PPParams, PPSource, prepare
from core.cli import main
from core.data.relation import propose
from core.errors import InputError
from core.privacy import PrivacyUnit
from core.registry import Policy, Registry
from ui.pp.params import PPSettings, ReleaseOptions, categories_of, page_params

N = 600
HEADER = ["person", "race", "precinct", "zone"]


@pytest.fixture
def tables(tmp_path, registry_dir, capsys):
    rng = np.random.default_rng(5)
    frame = pd.DataFrame(
        {
            "person": np.arange(N),
            "race": rng.choice(["a", "b", "c", "d"], N, p=[0.5, 0.3, 0.15, 0.05]),
            "precinct": rng.integers(1, 5, N),
            "zone": rng.choice(["n", "s"], N),
        }
    )
    path = tmp_path / "stops.csv"
    frame.to_csv(path, index=False)
    reg = Registry()
    pol = Policy(10.0, 1e-3)
    reg.add_dataset("uid", [("t", path)], pol, uid="person", publishable=("precinct", "zone"))
    reg.add_dataset("rows", [("t", path)], pol, row_is_unit=True, publishable=("precinct",))
    schema = propose(path)
    fact = replace(schema.column("race"), categories=("a", "b", "c", "d"))
    reg.add_dataset("schema", [("t", path)], pol, uid="person", publishable=("precinct",),
                    schemas={"t": schema.with_column(fact)})  # fmt: skip
    capsys.readouterr()
    return path, reg


def cli_prepared(monkeypatch, argv):
    """What `dpx balance` prepares for `argv` (stopped right after `prepare`)."""
    import core.cli.balance as balance

    seen = []
    real = balance.prepared_or_refused

    def spy(registry, params, source, context=()):
        seen.append(real(registry, params, source, context))
        raise InputError("stopped after prepare")

    monkeypatch.setattr(balance, "prepared_or_refused", spy)
    monkeypatch.setenv("DPX_MODE", "owner")
    assert main(argv) == 2
    (prepared,) = seen
    return prepared


def page_prepared(path, dataset, sa, missing, chosen, categories_text, epsilon=1.0):
    """What the page prepares for the same choices (the widgets' values, converted by the page's
    pure function; the frame as the page holds it)."""
    df = pd.read_csv(path)
    settings = PPSettings("key", sa, "0.3", "0.6", missing, "stable", "none")
    columns = tuple(c for c in df.columns if c == sa or c in chosen)
    options = ReleaseOptions(columns, epsilon, categories_of(categories_text), False)
    return prepare(page_params(settings, options), PPSource.of_frame(df, dataset))


MATRIX = list(
    itertools.product(
        [None, "uid", "rows", "schema"],  # files given directly, or a registered dataset
        ["", "a, b, c, d"],  # categories declared, or not
        ["drop", "category"],
        [(), ("precinct",)],
    )
)


@pytest.mark.parametrize(("dataset", "categories", "missing", "columns"), MATRIX)
def test_the_cli_and_the_page_prepare_the_same_publication(
    tables, monkeypatch, tmp_path, dataset, categories, missing, columns
):
    path, reg = tables
    source = [str(path)] if dataset is None else ["--dataset", dataset]
    argv = ["balance", *source, "--sa", "race", "--rho1", "0.3", "--rho2", "0.6", "--perturb",
            "--out", str(tmp_path / "o.csv"), "--missing", missing]  # fmt: skip
    if categories:
        argv += ["--categories", categories.replace(" ", "")]
    if columns:
        argv += ["--columns", ",".join(columns)]
    cli = cli_prepared(monkeypatch, argv)
    ds = None if dataset is None else reg.dataset(dataset)
    page = page_prepared(path, ds, "race", missing, columns, categories)
    assert cli == page
    assert cli.mechanisms == page.mechanisms and cli.cost == page.cost
    assert cli.claim == page.claim and cli.rho == page.rho and cli.unit == page.unit
    assert cli.columns == page.columns == tuple(c for c in HEADER if c in ("race", *columns))
    declared = bool(categories) or dataset == "schema"
    assert (cli.cost.delta == 0) is declared and cli.cost.epsilon == pytest.approx(1.0)
    expected_unit = {
        None: PrivacyUnit.record(),
        "uid": PrivacyUnit.person("person"),
        "rows": PrivacyUnit.row_is_person(),
        "schema": PrivacyUnit.person("person"),
    }[dataset]
    assert cli.unit == expected_unit and cli.claim.unit_column == expected_unit.column


def test_without_declared_categories_the_selection_is_a_mechanism_with_its_delta(tables):
    path, reg = tables
    params = PPParams("race", 3 / 10, 6 / 10, missing="drop")
    prepared = prepare(params, PPSource.of_file(path))
    plan, select = prepared.mechanisms
    assert select.delta > 0 and select.epsilon == 0 and plan.epsilon == 1.0
    assert prepared.cost.delta == select.delta and prepared.categories_from == CategoriesFrom.DATA
    declared = prepare(replace(params, categories=("a", "b", "c", "d")), PPSource.of_file(path))
    assert len(declared.mechanisms) == 1 and declared.cost.delta == 0
    assert declared.categories_from == CategoriesFrom.GIVEN


def test_a_schema_s_categories_are_the_default_and_the_cli_says_so(
    tables, monkeypatch, capsys, tmp_path
):
    path, reg = tables
    prepared = prepare(PPParams("race", 3 / 10, 6 / 10, missing="drop"),
                       PPSource.of_file(path, reg.dataset("schema")))  # fmt: skip
    assert prepared.settings.categories == ("a", "b", "c", "d") and prepared.cost.delta == 0
    assert prepared.categories_from == CategoriesFrom.SCHEMA
    monkeypatch.setenv("DPX_MODE", "analyst")
    argv = ["balance", "--dataset", "schema", "--sa", "race", "--rho1", "0.3", "--rho2", "0.6",
            "--perturb", "--out", str(tmp_path / "p.csv"), "--missing", "drop"]  # fmt: skip
    assert main(argv) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert "the dataset's declared schema" in out and "delta 0" in out
    (release,) = Registry().releases("schema")
    assert release.delta == 0 and release.params["categories_from"] == CategoriesFrom.SCHEMA


@pytest.mark.parametrize(
    ("dataset", "columns", "message"),
    [
        ("uid", ("person",), "not declared it publishable"),  # the unit column
        ("rows", ("zone",), "not declared it publishable"),  # not declared
        (None, ("nope",), "'nope' not found"),
    ],
)
def test_prepare_refuses_from_the_header_and_the_declarations(tables, dataset, columns, message):
    path, reg = tables
    ds = None if dataset is None else reg.dataset(dataset)
    params = PPParams("race", 3 / 10, 6 / 10, missing="drop", columns=columns)
    with pytest.raises(InputError, match=message):
        prepare(params, PPSource.of_file(path, ds))


def test_prepare_reads_the_header_only(tables, tmp_path):
    """A frame whose cells cannot be read: prepare still succeeds (it reads the header)."""

    class Unreadable(pd.DataFrame):
        def __getitem__(self, key):
            raise AssertionError("prepare read a column")

    path, reg = tables
    frame = Unreadable(pd.read_csv(path))
    prepared = prepare(PPParams("race", 3 / 10, 6 / 10, missing="drop"),
                       PPSource.of_frame(frame, reg.dataset("uid")))  # fmt: skip
    assert prepared.unit == PrivacyUnit.person("person")
