"""DP SQL: register tables, write or build a SELECT WITH ANONYMIZATION / DIFFERENTIAL_PRIVACY
query, see its staged rewrite, release noisy rows with 95% intervals.

Budgets are the release registry's (`core.registry`), never the browser session's: a registered
dataset's runs are charged to its (ε, δ) budget through a `RegistryLedger` (one atomic registry
transaction before any data is read, with the dataset policy's per-query caps), so a reload, a
restart, a second browser and `dpx sql --dataset` all see one spend. Demo tables and uploads
(the owner exploring unregistered data) are recorded as unregistered runs, not limited across
runs — exactly as `dpx sql --table` does.

Thin page: widgets -> core.dpsql -> core.viz.dpsql -> st.*.
Every widget the page can hide (behind a choice, or after an `st.stop`) carries Streamlit's
`persist_state="session"` beside `persist`: in a real browser `persist` alone lost the values
of widgets unmounted within the page (found on the location page, commit 54997dc).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pandas as pd
import streamlit as st

from core.data.loading import MAX_UPLOAD_BYTES, load_table
from core.dpsql.builder import BUILDER_KINDS, BuilderAggregate, compose, from_options
from core.dpsql.catalog import (
    ROW_ID_COLUMN,
    UNIT_EXPLANATION,
    Catalog,
    unit_column_concerns,
)
from core.dpsql.demos import DEMOS, PUBLIC_TABLES, examples_for, group_units
from core.dpsql.execute.engine import Engine
from core.dpsql.execute.pool import POOL
from core.dpsql.legacy import NO_CAPS, QueryCaps, legacy_run_charged
from core.dpsql.limits import ResourceLimits
from core.dpsql.service import CI_CAVEAT, NON_PRIVATE_LABEL, explain, prepare, stage_tables
from core.dpsql.sql.bigquery import to_bigquery
from core.dpsql.sql.expressions import DIALECTS
from core.errors import InputError
from core.privacy import BudgetLedger
from core.registry import Dataset, Registry
from core.registry.ledger import RegistryLedger
from core.sparkutil import spark_unavailable_reason
from core.viz.dpsql import (
    budget_figure,
    group_labels,
    key_columns,
    ledger_figure,
    result_figure,
    result_table,
    survival_figure,
)
from pages.common import current_noise, forget, persist, user_errors
from pages.mode import is_analyst, registered_dataset_picker

SQL_TOOL = "sql"
RESULT = "dpsql_result"
QUERY = "dpsql_query"
FILES = "dpsql_files"
KEPT_FILES = "dpsql_files::kept"  # uploads kept for the session (a file uploader forgets them)
DEMO_NAMES = [d.name for d in DEMOS]
UNIT_COLUMN, UNIT_ROW = "A column says whose data each row is", "Each row is one person"


@st.cache_data(show_spinner="Loading demo tables…")
def _demo_tables(name: str) -> dict[str, pd.DataFrame]:
    return next(d for d in DEMOS if d.name == name).load()


@st.cache_data(show_spinner=False, max_entries=max(2, (1 << 30) // MAX_UPLOAD_BYTES), ttl=3600)
def _upload(data: bytes, name: str, digest: str) -> pd.DataFrame:
    return load_table(data, name=name)


PAGE_LIMITS = POOL.limits(ResourceLimits(timeout_s=120.0))  # one slot's share of memory


@st.cache_resource(show_spinner="Loading tables into the DuckDB sandbox…", max_entries=4)
def _engine(key: str, _catalog: Catalog) -> Engine:
    return Engine(_catalog, limits=PAGE_LIMITS)  # a watchdog stops runaway queries


ENGINES = ("DuckDB", "Spark")  # Spark only when PySpark and Java 17 are available (issue 11)


@st.cache_resource(
    show_spinner="Starting Spark (local[2]) and registering the tables…", max_entries=2
)
def _spark_engine(key: str, _catalog: Catalog):
    from core.dpsql.execute.spark_engine import SparkEngine  # optional extra: imported on demand

    return SparkEngine(_catalog, timeout_s=PAGE_LIMITS.timeout_s)


def _kept(key: str, options: list, default=None) -> str:
    """`persist(key, default)`, first dropping a kept value that is no longer an option."""
    if st.session_state.get(key) is not None and st.session_state.get(key) not in options:
        forget(key)
    return persist(key, default)


def _uploads() -> list[tuple[str, bytes]]:
    """The uploaded tables as (file name, bytes), kept for the session: after navigating away
    and back the file uploader is empty, so the page keeps using the files uploaded earlier."""
    files = st.file_uploader(
        "Tables (one file per table; the file name is the table name)",
        type=["csv", "parquet"], accept_multiple_files=True, key=FILES,
    )  # fmt: skip
    if files:
        st.session_state[KEPT_FILES] = [(f.name, f.getvalue()) for f in files]
        return st.session_state[KEPT_FILES]
    kept = st.session_state.get(KEPT_FILES) or []
    if kept:
        c1, c2 = st.columns([4, 1])
        c1.caption(
            "Using the files uploaded earlier in this session: "
            + ", ".join(f"**{name}**" for name, _ in kept) + "."
        )  # fmt: skip
        if c2.button("Forget these files", key="dpsql_files_forget"):
            st.session_state.pop(KEPT_FILES, None)
            st.rerun()
    return kept


def _registered_tables(dataset: Dataset) -> dict[str, pd.DataFrame]:
    """The registered dataset's files (already verified unchanged), cached by fingerprint."""
    return {t.name: _upload(Path(t.path).read_bytes(), t.path, t.sha256) for t in dataset.tables}


def _open_registry() -> Registry | None:
    """The registry; for unregistered data a registry that cannot be opened only warns."""
    try:
        return Registry()
    except InputError as err:
        st.warning(f"This run will not be recorded: {err}")
        return None


def _recorded_runs(registry: Registry, dataset: Dataset | None, data_key: str) -> list:
    """What the registry holds for the data on screen: the registered dataset's releases (all
    tools: the budget is the dataset's), or the SQL runs recorded for this unregistered data
    (matched by its fingerprint, so they survive a reload)."""
    if dataset is not None:
        return registry.releases(dataset.name)
    return [
        r
        for r in registry.releases()
        if r.dataset is None and r.tool == SQL_TOOL and r.params.get("data") == data_key
    ]


def _unrecorded_ledger() -> BudgetLedger:
    """Only when the registry cannot be opened for unregistered data: no limit, as the CLI."""
    return BudgetLedger()


def _runs_frame(runs: list) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {"id": r.id, "time": r.time, "tool": r.tool, "kind": r.kind.value,
             "status": r.status.value, "ε": r.epsilon, "δ": r.delta, "noise": r.mode,
             "query": r.params.get("query", "")}
            for r in runs
        ],
        columns=["id", "time", "tool", "kind", "status", "ε", "δ", "noise", "query"],
    )  # fmt: skip


def _show_result(res: dict, current: tuple[str, str, str]) -> None:
    """Draw a released result; label it when it came from another query, data or noise mode.

    Only released values are shown (rows, intervals, T); nothing here reads data."""
    if (res["sql"], res["catalog"], res["noise"]) != current:
        st.warning(
            "Earlier result — it was released for a different query, data or noise mode than "
            "the ones above. Press **Run query** to release a result for the current query."
        )
        with st.expander("The query of this earlier result"):
            st.code(res["sql"], language="sql")
    if not res["noise"].startswith("secure"):
        st.warning(f"Seeded noise: {res['noise']}.")
    table = result_table(res)
    r1, r2 = st.columns(2)
    r1.metric("Partitions released", res["partitions_released"])
    r2.metric("Threshold T", res["threshold"]["integer"] or "none (public groups)")
    st.caption(
        "Suppressed partitions are not counted here: an exact count of dropped groups is "
        "not private (see the Teaching view for learning). " + CI_CAVEAT + "."
    )
    if table.empty and res["threshold"]["integer"] is not None:
        st.info(
            f"No group reached the release threshold T = {res['threshold']['integer']}. "
            "Raise ε, lower C_u, use fewer aggregates, or group more coarsely."
        )
    st.dataframe(table, hide_index=True, key="dpsql_result_table")
    numeric = [c for c, widths in res["ci95"].items() if widths and widths[0] is not None]
    if numeric and res["rows"]:
        col = numeric[0]
        if len(numeric) > 1:
            col = st.selectbox(
                "Chart", numeric, persist_state="session", key=_kept("dpsql_chart_col", numeric)
            )
        keys = key_columns(res["columns"], res["ci95"])
        labels = group_labels(res["rows"], res["columns"], keys)
        values = [row[res["columns"].index(col)] for row in res["rows"]]
        iv = res["intervals95"][col]
        st.plotly_chart(
            result_figure(labels, values, [a for a, _ in iv], [b for _, b in iv], col),
            key="dpsql_result_chart",
        )
    st.write("Ledger entries of this run")
    st.dataframe(pd.DataFrame(res["ledger"]), hide_index=True, key="dpsql_run_ledger")


st.title("DP SQL")
st.write(
    "Write SQL with `SELECT WITH ANONYMIZATION` (Wilson et al.) or `SELECT WITH "
    "DIFFERENTIAL_PRIVACY` (ZetaSQL/BigQuery). The query is rewritten into stages — per-user "
    "aggregation, at most C_u groups per user, clamping — then noise is added outside SQL and "
    "groups with too few users are suppressed."
)

# ------------------------------------------------------------------------------------ tables
st.header("1 · Tables")
REGISTERED = "Registered dataset"
# analyst mode: registered datasets only (their releases are charged to the registry's budget)
SOURCES = [REGISTERED] if is_analyst() else ["Demo dataset", "Upload CSV/Parquet", REGISTERED]
source = st.radio("Data", SOURCES, horizontal=True, key=_kept("dpsql_source", SOURCES, SOURCES[0]))
tables: dict[str, pd.DataFrame] = {}
fingerprint = ""  # the registered files' hashes: cache keys only, never shown or recorded
public: set[str] = set()
registry: Registry | None = None
dataset: Dataset | None = None
with user_errors():
    if source == REGISTERED:
        picked = registered_dataset_picker(key="dpsql_dataset")
        if picked is None:
            st.stop()
        registry, dataset = picked
        if not dataset.uid:
            st.error(
                f"Dataset '{dataset.name}' has no privacy-unit column: DP SQL needs one. The "
                "owner registers it with `dpx dataset add ... --uid COL`."
            )
            st.stop()
        tables = _registered_tables(dataset)
        public = {t.name for t in dataset.public_tables}
        # the key names the dataset, never its files' SHA-256: keys reach the browser (widget
        # keys as CSS classes) and recorded params reach reports, and a hash of the raw rows
        # is not DP (it tests a guess about one row); only the engine cache sees the hashes
        data_key = f"registered:{dataset.name}"
        fingerprint = ",".join(sorted(f"{t.name}:{t.sha256}" for t in dataset.tables))
    elif source == "Demo dataset":
        demo = st.selectbox(
            "Demo",
            DEMO_NAMES,
            persist_state="session",
            key=_kept("dpsql_demo", DEMO_NAMES, DEMO_NAMES[0]),
        )
        st.caption(next(d.description for d in DEMOS if d.name == demo))
        tables = _demo_tables(demo)
        public = set(PUBLIC_TABLES.get(demo, set()))
        data_key = f"demo:{demo}"
    else:
        digests = []
        for file_name, data in _uploads():
            digest = hashlib.sha256(data).hexdigest()
            name = "".join(c if c.isalnum() else "_" for c in Path(file_name).stem) or "t"
            tables[name] = _upload(data, file_name, digest)
            digests.append(f"{name}:{digest}")
        data_key = "upload:" + ",".join(sorted(digests))
        if not tables:
            st.info("Upload at least one table, or pick a demo dataset.")
            st.stop()

    names = list(tables)
    public_key = f"dpsql_public_{data_key}"
    if dataset is None:
        public = set(
            st.multiselect(
                "Public tables (no privacy unit; joined freely)", names,
                persist_state="session", key=persist(public_key, sorted(public)),
            )
        )  # fmt: skip
    else:
        st.caption(
            "Public tables (registered): " + (", ".join(f"`{n}`" for n in sorted(public)) or "none")
        )
    private = [n for n in names if n not in public]
    if not private:
        st.error("Mark at least one table as private: a DP query reads a private table.")
        st.stop()
    common_cols = sorted(set.intersection(*(set(map(str, tables[n].columns)) for n in private)))
    if dataset is not None:  # the owner declared the unit when registering the dataset
        unit_kind, uid = UNIT_COLUMN, dataset.uid
        st.caption(f"Privacy unit: `{uid}` (registered with dataset '{dataset.name}').")
    elif source == "Demo dataset":  # the demo declares its unit (see its description)
        unit_kind, uid = UNIT_COLUMN, "uid"
        st.caption("Privacy unit: `uid` (declared by the demo dataset).")
    else:  # never guessed: the owner says what a unit is
        st.markdown(f"**Privacy unit.** {UNIT_EXPLANATION}")
        unit_kind = st.radio(
            "What is the privacy unit?", [UNIT_COLUMN, UNIT_ROW], index=None, horizontal=True,
            persist_state="session", key=persist(f"dpsql_unit_kind_{data_key}"),
        )  # fmt: skip
        uid = None
        if unit_kind == UNIT_COLUMN:
            if not common_cols:
                st.error(
                    "The private tables share no column, so no column can name the unit of all "
                    f"of them. Choose “{UNIT_ROW}” or mark tables as public."
                )
                st.stop()
            uid = st.selectbox(
                "Privacy-unit column (whose data each row is)", common_cols, index=None,
                placeholder="choose the column…", persist_state="session", key=_kept(f"dpsql_uid_{data_key}", common_cols),
            )  # fmt: skip
        if unit_kind is None or (unit_kind == UNIT_COLUMN and uid is None):
            st.info("Choose the privacy unit to continue: nothing is guessed.")
            st.stop()
        if unit_kind == UNIT_ROW:
            uid = ROW_ID_COLUMN
            st.info(
                f"Added a row-id column `{ROW_ID_COLUMN}` to each private table: every row is "
                "treated as a different person. If one person can have several rows, the "
                "guarantee protects single rows, not people."
            )
    catalog = Catalog()
    for n in names:
        if n in public:
            catalog.add_public(n, tables[n])
        elif unit_kind == UNIT_ROW:
            catalog.add_private_rows(n, tables[n])
        else:
            catalog.add_private(n, tables[n], uid)
            if source != "Demo dataset" and not is_analyst():
                for concern in unit_column_concerns(n, tables[n], uid):
                    st.warning(f"Owner check (reads the data, not released): {concern}")
    catalog_key = f"{data_key}|public={sorted(public)}|unit={unit_kind}:{uid}"
    engine_key = f"{catalog_key}|{fingerprint}"  # a re-registered file gets a new engine
    if not is_analyst():  # raw rows and exact row counts: owner only
        with st.expander("Table previews"):
            for n in names:
                role = "public" if n in public else f"private (unit: {uid})"
                st.write(f"**{n}** — {role}, {len(tables[n]):,} rows (owner view)")
                st.dataframe(catalog.get(n).frame.head(5), hide_index=True)

# ------------------------------------------------------------------------------------- query
st.header("2 · Query")
examples = examples_for(demo) if source == "Demo dataset" else examples_for("")
COMPOSE = ["Example queries", "Builder"]
mode = st.radio(
    "Compose",
    COMPOSE,
    horizontal=True,
    persist_state="session",
    key=_kept("dpsql_compose", COMPOSE, COMPOSE[0]),
)
if mode == "Example queries":
    titles = list(examples)
    choice = st.selectbox(
        "Example", titles, persist_state="session", key=_kept("dpsql_example", titles, titles[0])
    )
    if st.session_state.get("dpsql_example_loaded") != (choice, data_key):
        st.session_state[QUERY] = examples[choice]
        st.session_state["dpsql_example_loaded"] = (choice, data_key)
else:
    with st.container(border=True), user_errors():
        froms = from_options(private, uid)
        frm = st.selectbox("FROM", froms, persist_state="session", key=_kept("dpsql_b_from", froms))
        cols = sorted({str(c) for n in private for c in tables[n].columns} - {uid})
        keys = st.multiselect(
            "GROUP BY keys", cols, persist_state="session", key=persist("dpsql_b_keys")
        )
        keys = [k for k in keys if k in cols]
        c1, c2, c3, c4, c5 = st.columns(5)
        kind = c1.selectbox(
            "Aggregate", BUILDER_KINDS, persist_state="session", key=persist("dpsql_b_kind")
        )
        column = c2.selectbox(
            "Column", cols, persist_state="session", key=_kept("dpsql_b_col", cols)
        )
        lower = c3.number_input(
            "Lower bound L", persist_state="session", key=persist("dpsql_b_lo", 0.0)
        )
        upper = c4.number_input(
            "Upper bound U", persist_state="session", key=persist("dpsql_b_hi", 10.0)
        )
        alias = c5.text_input(
            "Name", persist_state="session", key=persist("dpsql_b_alias", "value")
        )
        e1, e2, e3 = st.columns(3)
        eps = e1.select_slider(
            "ε (more privacy ← → more accuracy)",
            options=[0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0], persist_state="session", key=persist("dpsql_b_eps", 1.0),
        )  # fmt: skip
        delta = e2.select_slider(
            "δ",
            options=[1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3],
            persist_state="session",
            key=persist("dpsql_b_delta", 1e-5),
        )
        cu = e3.number_input(
            "C_u (max groups per unit)",
            1,
            100,
            persist_state="session",
            key=persist("dpsql_b_cu", 1),
        )
        if st.button("Use this query", key="dpsql_b_use"):
            agg = BuilderAggregate(kind, column, lower, upper, alias or None)
            st.session_state[QUERY] = compose(frm, keys, [agg], eps, delta, cu, uid)
sql = st.text_area("DP SQL", persist_state="session", key=persist(QUERY, ""), height=180)
if not sql.strip():
    st.info("Write a DP SQL query, pick an example, or compose one with the builder.")
    st.stop()

noise = current_noise()
with user_errors():
    prepared = prepare(sql, catalog, noise)

if is_analyst():  # no Teaching view: its exact intermediate tables are not releases
    tab_explain, tab_run, tab_ledger = st.tabs(["Explain", "Run", "Ledger"])
    tab_teach = None
else:
    tab_explain, tab_run, tab_ledger, tab_teach = st.tabs(["Explain", "Run", "Ledger", "Teaching"])

# ----------------------------------------------------------------------------------- explain
with tab_explain:
    st.caption(
        "Everything here follows from public parameters only: no data is read, nothing is spent."
    )
    dialect = st.selectbox(
        "Transpile to",
        DIALECTS,
        persist_state="session",
        key=_kept("dpsql_dialect", list(DIALECTS)),
    )
    info = explain(prepared, dialect)
    th = info["threshold"]
    if th["integer"] is None:
        st.info("PUBLIC_GROUPS: every key of the public table is released; no τ, no δ spent.")
    else:
        m1, m2, m3, m4 = st.columns(4)
        m1.metric("τ (Wilson)", f"{th['tau']:.2f}")
        m2.metric("T (integer threshold applied)", th["integer"])
        m3.metric("ε for the unit count", f"{th['epsilon']:.3g}")
        m4.metric("realised δ", f"{th['realised_delta']:.2e}")
    if source == "Demo dataset" and th["integer"] is not None and not is_analyst():
        with st.expander("Owner / teaching view — NOT PRIVATE: the demo's group sizes against T"):
            units = group_units(demo, tables)
            st.caption(
                "Exact distinct units per department of the demo data (owner information, "
                f"never released). Groups well above T = {th['integer']} are released almost "
                "surely; groups below it almost never."
            )
            sizes = units.reset_index().rename(columns={"units": "units (exact)"})
            sizes["vs T"] = [
                "above T" if u >= th["integer"] else "below T" for u in units.to_numpy()
            ]
            st.dataframe(sizes, hide_index=True, key="dpsql_group_sizes")
    st.subheader("Stages (one CTE each)")
    for stage in info["stages"]:
        with st.expander(f"{stage['name']} — {stage['caption']}"):
            st.code(stage["sql"], language="sql")
    st.markdown("**Python steps after SQL:** " + " → ".join(info["python_steps"]))
    st.subheader(f"Staged SQL in {dialect}")
    st.code(info["rewritten_sql"], language="sql")
    with st.expander("Export to BigQuery syntax (BigQuery adds its own noise: numbers differ)"):
        bq_sql, bq_warnings = to_bigquery(prepared.query, uid)
        st.code(bq_sql, language="sql")
        for w in bq_warnings:
            st.warning(w)
        st.download_button(
            "Download .sql",
            bq_sql + ";\n",
            "dp_query_bigquery.sql",
            key="dpsql_bq",
            on_click="ignore",
        )
    st.subheader("Budget split")
    st.dataframe(pd.DataFrame(info["budget_split"]), hide_index=True, key="dpsql_split")
    st.plotly_chart(budget_figure(info["budget_split"]), key="dpsql_budget_chart")
    if info["survival_curve"]:
        st.plotly_chart(
            survival_figure(info["survival_curve"], th["integer"], th["tau"]),
            key="dpsql_survival",
        )
    st.caption(
        "AVG is the average of per-user averages; VAR/STDDEV/quantiles use at most "
        f"k = {prepared.query.options.max_rows_per_group} values per user and group."
    )

# --------------------------------------------------------------------------------------- run
if registry is None:  # unregistered data: recorded in the registry, not limited
    registry = _open_registry()
run_params = {"query": sql, "data": data_key, "catalog": catalog_key, "via": "app"}
if dataset is not None:
    p = dataset.policy
    caps = QueryCaps(
        p.max_epsilon_per_query, p.max_delta_per_query, f"dataset `{dataset.name}` policy"
    )
else:
    caps = NO_CAPS
with tab_run:
    spend = sum(r["epsilon"] for r in info["budget_split"])
    where = (
        f"the budget of registered dataset **{dataset.name}**"
        if dataset is not None
        else "no budget: unregistered data (demo or upload) is recorded in the registry as an "
        "unregistered run, not limited across runs, like `dpx sql --table`"
    )
    st.write(
        f"Running releases noisy rows and spends **ε = {spend:.3g}, δ = "
        f"{prepared.query.options.delta:g}** from {where}. Noise: {noise.label}."
    )
    cap_text = ", ".join(
        f"{name} ≤ {value:g}"
        for name, value in (("ε", caps.max_epsilon), ("δ", caps.max_delta))
        if value is not None
    )
    st.caption(
        f"Limits: each query may run {PAGE_LIMITS.timeout_s:g} s on {PAGE_LIMITS.threads} "
        f"thread(s) with at most {PAGE_LIMITS.memory_limit} of memory; a query stopped after it "
        "read data keeps its charge. Per-query caps: "
        + (f"{cap_text} ({caps.source})." if cap_text else "none.")
    )
    engine_name = ENGINES[0]
    if spark_unavailable_reason() is None:  # offered only where it can run
        engine_name = st.radio(
            "Engine", ENGINES, horizontal=True, persist_state="session", key=persist("dpsql_engine", ENGINES[0]),
            help="Where the staged SQL runs: embedded DuckDB, or Apache Spark in local mode "
            "(same plan, same sampling key: the same seed releases the same rows). Noise is "
            "always added here, in Python.",
        )  # fmt: skip
    if st.button("Run query", type="primary", key="dpsql_run"):
        st.session_state.pop(RESULT, None)  # a refused run leaves no earlier rows on screen
        ledger = (
            RegistryLedger(registry, SQL_TOOL, dataset, run_params, noise.mode)
            if registry is not None
            else None
        )
        queued = st.empty()  # every session's queries share the process-wide pool
        try:
            with (
                st.spinner("Running the staged query…"),
                POOL.slot(
                    lambda ahead: queued.info(
                        f"Queued behind {ahead} running or waiting quer{'y' if ahead == 1 else 'ies'}…"
                    )
                ),
            ):
                queued.empty()
                engine = (
                    _spark_engine(engine_key, catalog)
                    if engine_name == "Spark"
                    else _engine(engine_key, catalog)
                )
                result = legacy_run_charged(
                    prepared, engine, noise,
                    ledger if ledger is not None else _unrecorded_ledger(), caps,
                )  # fmt: skip
        except InputError as exc:  # budget, caps, seeded on real data: shown, page stays
            if ledger is not None and ledger.release is not None:
                registry.fail(ledger.release.id, str(exc))  # charged: the charge stands
                st.error(f"Failed after the charge (release #{ledger.release.id}). {exc}")
            else:
                if dataset is not None and ledger is not None and not ledger.refused:
                    # refused by the caps or the budget check before the registry's charge step
                    # (which records its own refusals): recorded here, charging nothing
                    registry.refuse(SQL_TOOL, dataset.name, str(exc), run_params)
                st.error(f"Refused — nothing was released or charged. {exc}")
        else:
            released = result.to_dict()
            if ledger is not None and ledger.release is not None:
                registry.attach(ledger.release.id, released)
                released["release_id"] = ledger.release.id
            st.session_state[RESULT] = {
                "sql": sql, "catalog": engine_key, "noise": noise.label, **released
            }  # fmt: skip
    res = st.session_state.get(RESULT)
    if res:
        _show_result(res, current=(sql, engine_key, noise.label))

# ------------------------------------------------------------------------------------ ledger
with tab_ledger:
    if registry is None:
        st.warning("The registry could not be opened: runs on this data are not recorded.")
    else:
        runs = _recorded_runs(registry, dataset, data_key)
        if dataset is not None:
            eps_spent, delta_spent = registry.spent(dataset.name)
            p = dataset.policy
            st.plotly_chart(ledger_figure(eps_spent, p.epsilon_total), key="dpsql_ledger_chart")
            caps_text = ", ".join(
                f"{name} {value:g} per query"
                for name, value in (("ε", p.max_epsilon_per_query), ("δ", p.max_delta_per_query))
                if value is not None
            )
            st.write(
                f"Dataset **{dataset.name}** (registry): spent ε = {eps_spent:.4g} of "
                f"{p.epsilon_total:g}, δ = {delta_spent:.2e} of {p.delta_total:.1e}"
                + (f"; caps: {caps_text}" if caps_text else "")
                + ". Every tool and every session charges this one budget (basic composition: "
                "sums). A query that would exceed it is refused before it reads any data. Only "
                "the data owner changes a total, with `dpx dataset budget` (recorded); there is "
                "no reset."
            )
        else:
            total = sum(r.epsilon for r in runs)
            st.info(
                "Unregistered data (demo or upload): each run is recorded in the registry as an "
                "unregistered run (seeded runs as demo runs), **not limited across runs** — "
                "exactly as `dpx sql --table`. To give data a budget, the owner registers it "
                "with `dpx dataset add NAME --table T=FILE --uid COL --epsilon E`."
            )
            st.write(
                f"Recorded for this data: {len(runs)} run(s), ε = {total:.4g} in total "
                "(not a budget)."
            )
        frame = _runs_frame(runs)
        st.dataframe(frame, hide_index=True, key="dpsql_ledger_table")
        st.download_button(
            "Recorded runs (CSV)",
            frame.to_csv(index=False),
            "dpsql_runs.csv",
            key="dpsql_dl_csv",
            on_click="ignore",
        )

# ---------------------------------------------------------------------------------- teaching
if tab_teach is not None:
    with tab_teach:
        st.error(f"**{NON_PRIVATE_LABEL}.** These tables are exact; never publish them.")
        if st.toggle(
            "Show the per-stage intermediate tables",
            persist_state="session",
            key=persist("dpsql_teach", False),
        ):
            with user_errors(), POOL.slot():
                stages = stage_tables(prepared, _engine(engine_key, catalog), limit=50)
            for name, frame in stages.items():
                st.markdown(f"**{name}** — not private — for learning only (first 50 rows)")
                st.dataframe(frame, hide_index=True, key=f"dpsql_stage_{name}")
            cross = stages["cross_user"]
            t = info["threshold"]["integer"]
            if t is not None:
                st.write(
                    f"In the first {len(cross)} partitions of cross_user, {int((cross['n_units'] >= t).sum())} "
                    f"have at least T = {t} units; the noisy count decides which are released."
                )
