"""One DP SQL request for both front doors (issue 28): the page (tables loaded as frames and
converted into the declared schemas, `catalog_of_frames`) and the CLI (the dataset's files read
in place, `catalog_of_dataset`) build equal prepared queries — the same mechanisms, cost and
claim — for the same registered dataset and query, and release the same rows with one seed.

Before, the page picked the unit as `sorted(uid)[0]` and no error code, the CLI its own words
and DPX-E009; and the page's types came from pandas while the CLI's came from a footer."""

from __future__ import annotations

import pandas as pd
import pytest

from core.data.loading import load_table
from core.dpsql.execute.engine import Engine
from core.dpsql.service import prepare
from core.dpsql.tables import catalog_of_dataset, catalog_of_frames
from core.governance import Role
from core.governance.origin import Origin
from core.governance.sql import sql_request
from core.privacy import Noise
from core.registry import Policy, Registry
from tests.dpsql.helpers import release_of

QUERIES = [
    "SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1, delta = 1e-5, max_groups_contributed = 2)"
    " dept, ANON_COUNT(*, 5) AS n, ANON_AVG(amount, 0, 100) AS a FROM t GROUP BY dept",
    "SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 0.5, delta = 1e-6, "
    "max_groups_contributed = 1{unit}) dept, COUNT(*) AS n, "
    "SUM(amount, contribution_bounds_per_group => (0, 50)) AS s FROM t GROUP BY dept",
]


@pytest.fixture(params=["uid", "row"])
def dataset(request, tmp_path):
    frame = pd.DataFrame(
        {
            "uid": [i // 3 for i in range(300)],
            "dept": [f"d{i % 4}" if i % 17 else None for i in range(300)],
            "amount": [float(i % 90) if i % 11 else None for i in range(300)],
        }
    )
    path = tmp_path / "t.csv"
    frame.to_csv(path, index=False)
    registry = Registry(tmp_path / "reg")
    uid = "uid" if request.param == "uid" else None
    registry.add_dataset("d", [("t", path)], Policy(100.0, 1e-3), uid=uid,
                         row_is_unit=request.param == "row")  # fmt: skip
    return registry.dataset("d")


def _doors(dataset):
    """The CLI's catalogue and the page's, for the same registered dataset."""
    cli = catalog_of_dataset(dataset, owner=False)
    frames = {t.name: load_table(t.path) for t in dataset.tables}
    page = catalog_of_frames(
        frames, frozenset(t.name for t in dataset.public_tables), dataset.uid,
        row_is_unit=dataset.row_is_unit, schemas=dataset.schemas,
    )  # fmt: skip
    return cli, page


@pytest.mark.parametrize("query", QUERIES)
def test_page_and_cli_prepare_the_same_release(dataset, query):
    unit = ", privacy_unit_column = uid" if dataset.uid else ", privacy_unit_column = row_id"
    sql = query.format(unit=unit)
    prepared, requests, released = [], [], []
    origins = (Origin.cli({"query": sql, "dataset": dataset.name}), Origin.app("s-1", "d"))
    for catalog, origin in zip(_doors(dataset), origins, strict=True):
        noise = Noise.seeded(9)
        p = prepare(sql, catalog, noise)
        prepared.append(p)
        requests.append(sql_request(p, role=Role.ANALYST, dataset=dataset, noise=noise,
                                    door=origin))  # fmt: skip
        engine = Engine(catalog)
        try:
            released.append(release_of(p, engine, noise).table)
        finally:
            engine.close()
    cli, page = prepared
    assert [m.to_json() for m in cli.mechanisms] == [m.to_json() for m in page.mechanisms]
    assert cli.cost == page.cost and cli.executed_sql == page.executed_sql
    assert requests[0].claim == requests[1].claim and requests[0].cost == requests[1].cost
    assert requests[0].error_code == requests[1].error_code == "DPX-E009"
    # both doors record the query as prepared, beside where it came from
    assert requests[0].params["query"] == requests[1].params["query"] == sql
    assert (requests[0].params["via"], requests[1].params["via"]) == ("cli", "app")
    words = "one person (column uid)" if dataset.uid else "one row (each row is one person)"
    assert requests[0].claim.unit == words == dataset.unit_words
    pd.testing.assert_frame_equal(released[0], released[1])
