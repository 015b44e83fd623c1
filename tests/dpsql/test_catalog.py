"""The catalogue never guesses a privacy unit: an explicit column or an explicit row-id choice."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from core.cli import main
from core.dpsql.catalog import ROW_ID_COLUMN, Catalog, UnitSource, unit_column_concerns
from core.errors import InputError

# A table like the issue's: incidents, no person id; a sparse two-valued flag sorts first.
INCIDENTS = pd.DataFrame(
    {
        "citation": ["Y", None, None, "N", None, "Y"] * 10,
        "district": ["north", "south", "east"] * 20,
        "minutes": [5.0, 12.0, 30.0, 7.0, 3.0, 18.0] * 10,
    }
)

COUNT_BY_DISTRICT = (
    "SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1e6, delta = 0.1, max_groups_contributed = 1) "
    "district, ANON_COUNT(*, 1) AS n FROM incidents GROUP BY district"
)


@pytest.mark.parametrize("uid", [None, ""])
def test_private_table_without_a_unit_is_refused_with_an_explanation(uid):
    with pytest.raises(InputError) as err:
        Catalog().add_private("incidents", INCIDENTS, uid)
    message = str(err.value)
    assert "privacy unit" in message and "--uid COL" in message and "--row-is-unit" in message
    assert "citation" in message  # the columns are listed so the owner can choose


def test_explicit_unit_column_is_recorded_as_such():
    spec = Catalog().add_private("incidents", INCIDENTS, "district")
    assert spec.uid == "district" and spec.unit_source is UnitSource.COLUMN
    assert ROW_ID_COLUMN not in spec.columns


def test_row_is_unit_adds_ids_unique_across_tables():
    catalog = Catalog()
    a = catalog.add_private_rows("incidents", INCIDENTS)
    b = catalog.add_private_rows("more", INCIDENTS.head(7))
    assert a.uid == b.uid == ROW_ID_COLUMN
    assert a.unit_source is UnitSource.ROW
    assert a.columns[0] == ROW_ID_COLUMN and a.columns[1:] == list(INCIDENTS.columns)
    ids = pd.concat([a.frame[ROW_ID_COLUMN], b.frame[ROW_ID_COLUMN]])
    assert ids.is_unique and ids.notna().all() and len(ids) == len(INCIDENTS) + 7
    assert ROW_ID_COLUMN not in INCIDENTS.columns  # the caller's frame is not modified
    assert catalog.uid_names() == {ROW_ID_COLUMN}


def test_row_is_unit_refuses_an_existing_row_id_column():
    with pytest.raises(InputError, match=f"--uid {ROW_ID_COLUMN}"):
        Catalog().add_private_rows("t", INCIDENTS.assign(**{ROW_ID_COLUMN: 1}))


def test_public_tables_have_no_unit():
    spec = Catalog().add_public("districts", INCIDENTS[["district"]].drop_duplicates())
    assert spec.uid is None and spec.unit_source is UnitSource.NONE


@pytest.fixture
def incidents_csv(tmp_path):
    path = tmp_path / "incidents.csv"
    INCIDENTS.to_csv(path, index=False)
    return path


def test_cli_refuses_a_private_table_without_uid_or_row_choice(incidents_csv, capsys):
    argv = ["sql", "--table", f"incidents={incidents_csv}", "--query", COUNT_BY_DISTRICT]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "--uid COL" in err and "--row-is-unit" in err
    assert "Traceback" not in err


def test_cli_row_is_unit_counts_each_row_once(incidents_csv, capsys):
    argv = ["sql", "--table", f"incidents={incidents_csv}", "--row-is-unit",
            "--query", COUNT_BY_DISTRICT, "--seed", "1", "--json"]  # fmt: skip
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    counts = {row[0]: row[1] for row in out["rows"]}
    # 20 rows per district, one unit each; epsilon = 1e6 makes the noise negligible.
    assert counts == pytest.approx({"north": 20, "south": 20, "east": 20}, abs=0.5)


def test_cli_refuses_uid_and_row_is_unit_together(incidents_csv, capsys):
    argv = ["sql", "--table", f"incidents={incidents_csv}", "--row-is-unit", "--uid", "district",
            "--query", COUNT_BY_DISTRICT]  # fmt: skip
    assert main(argv) == 2
    assert "Traceback" not in capsys.readouterr().err


def test_unit_column_concerns_flag_the_issues_citation_flag_only():
    """The issue's column (two values, mostly empty) draws both concerns; a real id draws none."""
    concerns = unit_column_concerns("incidents", INCIDENTS, "citation")
    assert len(concerns) == 2
    assert "30 of 60 rows have no value" in concerns[0]
    assert "only 2 distinct value(s) in 60 rows" in concerns[1]
    people = INCIDENTS.assign(person=range(60))
    assert unit_column_concerns("incidents", people, "person") == []
