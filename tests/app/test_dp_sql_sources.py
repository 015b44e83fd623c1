"""The DP SQL page on data other than its demos (issue 19.5): on an upload or a registered
dataset the example and the builder use that schema — a first query that runs on it, never a
query over the demo tables — and a query the person typed survives switching the data source
and back."""

from __future__ import annotations

import pytest

from core.dpsql.demos import DEMOS
from core.registry import Policy, Registry

PAGE = "pages/dp_sql.py"
TRIPS = b"rider,zone,fare\n" + b"".join(
    f"r{i % 40},z{i % 3},{i % 17}\n".encode() for i in range(240)
)


def _errors(at) -> list[str]:
    return [e.value for e in at.error if "NON-PRIVATE" not in e.value]


def _upload(at):
    at.radio(key="dpsql_source").set_value("Upload CSV/Parquet").run()
    at.file_uploader(key="dpsql_upload").set_value(("trips.csv", TRIPS, "text/csv")).run()
    next(r for r in at.radio if r.label == "What is the privacy unit?").set_value(
        "A column says whose data each row is"
    ).run()
    next(s for s in at.selectbox if (s.key or "").startswith("dpsql_uid_")).set_value("rider")
    return at.run()


def test_an_upload_starts_from_a_query_over_its_own_tables(app_test, registry_dir):
    at = _upload(app_test(PAGE).run())
    assert not at.exception and not _errors(at), _errors(at)
    query = at.text_area(key="dpsql_query").value
    assert "FROM trips" in query and "Employee" not in query
    assert at.selectbox(key="dpsql_example").options == ["A first query on these tables"]
    at.button(key="dpsql_run").click().run()
    assert not at.exception and not _errors(at), _errors(at)
    assert "Partitions released" in {m.label for m in at.metric}
    # the builder offers this schema's tables and columns
    at.radio(key="dpsql_compose").set_value("Builder").run()
    assert at.selectbox(key="dpsql_b_from").options == ["trips"]
    assert set(at.multiselect(key="dpsql_b_keys").options) == {"zone", "fare"}


def test_a_registered_dataset_starts_from_a_query_over_its_own_tables(
    app_test, registry_dir, tmp_path
):
    tables = next(d for d in DEMOS if d.name == "sql-synthetic-shop").load()
    files = {}
    for name, frame in tables.items():
        frame.head(5000).to_csv(tmp_path / f"{name}.csv", index=False)
        files[name] = (name, tmp_path / f"{name}.csv")
    public = [files.pop("categories")]
    Registry(registry_dir).add_dataset(
        "shop", list(files.values()), Policy(5.0, 1e-4), public=public, uid="uid"
    )
    at = app_test(PAGE).run()
    at.radio(key="dpsql_source").set_value("Registered dataset").run()
    query = at.text_area(key="dpsql_query").value
    assert "FROM users" in query and "Employee" not in query  # its first private table
    assert not at.exception and not _errors(at), _errors(at)
    at.button(key="dpsql_run").click().run()
    assert "Partitions released" in {m.label for m in at.metric}, _errors(at)


def test_a_typed_query_survives_switching_the_source_and_back(app_test, registry_dir):
    at = app_test(PAGE).run()
    typed = at.text_area(key="dpsql_query").value.replace("epsilon = 1", "epsilon = 0.3")
    at.text_area(key="dpsql_query").set_value(typed).run()
    _upload(at)
    assert "FROM trips" in at.text_area(key="dpsql_query").value
    at.radio(key="dpsql_source").set_value("Demo dataset").run()
    assert at.text_area(key="dpsql_query").value == typed
    at.radio(key="dpsql_source").set_value("Upload CSV/Parquet").run()
    assert "FROM trips" in at.text_area(key="dpsql_query").value  # the upload's own, kept too


@pytest.mark.parametrize("demo", ["sql-employee-orders", "sql-synthetic-shop"])
def test_each_demo_starts_from_its_own_example(app_test, registry_dir, demo):
    at = app_test(PAGE).run()
    at.selectbox(key="dpsql_demo").set_value(demo).run()
    assert not _errors(at), _errors(at)
