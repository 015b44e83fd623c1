"""Location histograms: build DP spatial histograms (HTF and baselines), map them, compare MRE.

Thin page: widgets -> core.spatial -> core.viz.spatial -> st.*.

Build and evaluate are two steps (issue 12, helpers in pages/lh_release.py): **Build releases**
charges one release per chosen method (a registered dataset: its budget in the release
registry; a demo table or an upload: recorded as an unregistered run, as `dpx htf` does) and the
map and downloads show exactly those releases; **Evaluate** (owner only) scores them against the
raw data, its cost shown as evaluation, never charged. Analyst mode (`DPX_MODE=analyst`):
registered datasets only, no counts of raw points, no evaluation, tuning, teaching view or
seeded noise, and binning that never refuses on the values (`prepare_total`).

Session rules (issue 8): no Streamlit element is ever called inside a cached function (cached
values are shared between sessions and replayed); the last build is kept in `st.session_state`
with the parameters it was built with, so reruns, downloads, reloads of the page state and
navigation never lose it; every widget keeps its value across navigation via `persist`.
Widgets that the page itself can hide (by a data choice, a missing build or a mode) also carry
Streamlit's `persist_state="session"`: in a real browser `persist` alone lost their values when
they were unmounted within the page (switching to an upload reset the grid to 64 and emptied
the methods, so no build was possible without re-picking them).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pandas as pd
import streamlit as st

from core.data.demos import get_demo
from core.data.loading import load_table
from core.data.validation import detect_lat_lon, validate_points
from core.errors import InputError
from core.privacy import Noise
from core.registry import Registry
from core.spatial.demos import DEMO_BBOX, DEMOS
from core.spatial.export import DEMO_BBOX_LABEL, PRIVACY_UNIT
from core.spatial.methods import METHODS, VARIANTS
from core.spatial.pipeline import DEFAULT_GRID as CLI_DEFAULT_GRID
from core.spatial.pipeline import prepare
from core.spatial.regions import REGION_BY_NAME, REGIONS, check_bbox
from core.spatial.total_prepare import prepare_total
from core.spatial.unit import unit_from
from core.viz.spatial import method_label
from pages.common import current_noise, kept_upload, persist, user_errors
from pages.htf_stepper import show_htf_stepper
from pages.lh_auto import WHEN_NOT_HTF
from pages.lh_release import BUILD_KEY, EVAL_KEY, Build, build, show_evaluation, show_results
from pages.lh_tuning import show_tuning
from pages.mode import is_analyst, registered_dataset_picker

EPS_CHOICES = [0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 1.0, 2.0, 5.0, 10.0]
PRT_CHOICES = [1e-4, 2e-4, 5e-4, 1e-3, 2e-3, 5e-3, 1e-2]
GRID_CHOICES = [64, 128, 256, 512, 1024, 2048]
DEFAULT_GRID = CLI_DEFAULT_GRID  # one default for app and CLI: the paper's 1024 (see cli.py)
DEFAULT_METHODS = ["auto", "htf", "ug", "ag", "kdtree-geo", "quadtree", "privtree"]
REGISTERED = "Registered dataset"
DEMO_EXTENT = "demo"
CUSTOM = "custom"
CHOOSE = "choose"
NO_PERSON = "— none: each point is the unit —"


@st.cache_data(show_spinner=False, max_entries=8)
def load_demo(name: str) -> pd.DataFrame:
    return get_demo(name).load()


@st.cache_data(show_spinner=False, max_entries=4)
def load_upload(digest: str, _data: bytes, filename: str) -> pd.DataFrame:
    return load_table(_data, name=filename)


@st.cache_data(show_spinner=False, max_entries=8)
def prepare_cached(digest: str, _df: pd.DataFrame, lat, lon, bbox, rows, cols, from_data,
                   person=None, k=None, seed=None):  # fmt: skip
    """Pure binning (no Streamlit element inside: cached values are replayed across sessions).
    With a person column each person keeps at most k points (seeded sample in demo mode)."""
    return prepare(
        _df, lat, lon, None if from_data else bbox, rows, cols, allow_data_bbox=from_data,
        unit=unit_from(person, k), noise=Noise.from_seed(seed),
    )  # fmt: skip


@st.cache_data(show_spinner=False, max_entries=8)
def check_points(digest: str, _df: pd.DataFrame, lat: str, lon: str) -> None:
    """Raise InputError for bad coordinates (pure; exceptions are not cached, results are)."""
    validate_points(_df, lat, lon, drop_nan=True)


@st.cache_data(show_spinner=False, max_entries=8)
def prepare_total_cached(digest: str, _df: pd.DataFrame, lat, lon, bbox, rows, person=None, k=None):
    """Analyst binning: fails on schema/public parameters only, never on the values (pure)."""
    return prepare_total(_df, lat, lon, bbox, rows, unit=unit_from(person, k), noise=Noise.secure())


def person_widgets(cols: list[str], digest: str) -> tuple[str | None, int | None]:
    """Which column says whose point it is (none: the unit is one point), and K."""
    c1, c2 = st.columns(2)
    choice = c1.selectbox(
        "Person column (whose point is it?)", [NO_PERSON, *cols], persist_state="session",
        key=persist(f"lh_person_{digest}", NO_PERSON),
        help="With a person column the release protects each person, not each point: every "
        "person keeps at most K of their points (a random subset) and every noise scale grows "
        "K times.",
    )  # fmt: skip
    if choice == NO_PERSON:
        return None, None
    k = c2.number_input(
        "At most K points per person", 1, 100_000, persist_state="session",
        key=persist("lh_person_k", 10),
    )  # fmt: skip
    return str(choice), int(k)


@st.cache_data(show_spinner=False, max_entries=4)
def load_registered(sha256: str, path: str) -> pd.DataFrame:
    """A registered table, read by the fingerprint the registry verified (pure)."""
    return load_table(Path(path).read_bytes(), name=path)


def sidebar_parameters() -> tuple[float, dict]:
    with st.sidebar:
        st.header("Privacy parameters")
        epsilon = st.select_slider(
            "Total epsilon (log scale)",
            options=EPS_CHOICES,
            help="Left: more privacy. Right: more accuracy.",
            key=persist("lh_eps", 0.5),
        )
        st.caption("← more privacy · more accuracy →")
        eps_prt = st.select_slider(
            "HTF partition budget per tree level", options=PRT_CHOICES, key=persist("lh_prt", 1e-3)
        )
        eps_height = st.number_input(
            "HTF eps_height (noisy N for the height)", 1e-6, 1.0, format="%.6f",
            key=persist("lh_eh", 1e-4),
        )  # fmt: skip
        T = st.number_input("T (split-search iterations)", 1, 10, key=persist("lh_T", 3))
        stop_count = st.number_input("Stop at noisy count ≤", 0, 100_000, key=persist("lh_sc", 100))
        stop_cells = st.number_input(
            "Stop below this many cells", 1, 1000, key=persist("lh_scells", 5)
        )
        height_mode = st.radio(
            "HTF height", ["auto (noisy N)", "manual"], horizontal=True,
            key=persist("lh_hm", "auto (noisy N)"),
        )  # fmt: skip
        height = (
            int(
                st.number_input("Height h", 1, 24, persist_state="session", key=persist("lh_h", 10))
            )
            if height_mode == "manual"
            else None
        )
        st.markdown("**HTF improvements** (off = faithful to the paper)")
        combine = st.checkbox(
            "combine_pruned (inverse-variance at pruned nodes)", key=persist("lh_cp")
        )
        consistency = st.checkbox("consistency (GLS over the tree)", key=persist("lh_cons"))
        cap_height = st.checkbox("cap_height (partition ≤ half the budget)", key=persist("lh_cap"))
        st.caption(f"Privacy unit (default, without a person column): {PRIVACY_UNIT}.")
    htf = {
        "eps_height": float(eps_height), "eps_prt_level": float(eps_prt), "T": int(T),
        "stop_count": float(stop_count), "stop_cells": int(stop_cells), "height": height,
        "combine_pruned": combine, "consistency": consistency, "cap_height": cap_height,
    }  # fmt: skip
    return float(epsilon), htf


def choose_data(analyst: bool):
    """(table, digest, demo name or None, registry or None, dataset or None); stops the page
    until there is data. An analyst can choose registered datasets only."""
    sources = [REGISTERED] if analyst else ["Demo dataset", "Upload CSV/Parquet", REGISTERED]
    if st.session_state.get("lh_src") not in (None, *sources):
        st.session_state.pop("lh_src", None)
    source = st.radio("Data", sources, horizontal=True, key=persist("lh_src", sources[0]))
    if source == REGISTERED:
        picked = registered_dataset_picker(key=persist("lh_dataset"))
        if picked is None:
            st.stop()
        registry, dataset = picked
        if len(dataset.private_tables) != 1:
            raise InputError(
                f"location histograms read one table, but dataset '{dataset.name}' has "
                f"{len(dataset.private_tables)} private tables. The owner registers the points "
                "table as its own dataset."
            )
        table = dataset.private_tables[0]
        df = load_registered(table.sha256, table.path)
        # the key names the dataset, never its file's SHA-256: widget keys reach the browser
        # (as CSS classes) and params reach reports, and a hash of the raw rows is not DP
        return df, f"registered:{dataset.name}", None, registry, dataset
    if source == "Demo dataset":
        demo_name = st.selectbox(
            "Demo dataset",
            [d.name for d in DEMOS],
            format_func=lambda n: f"{n} — {get_demo(n).description}",
            persist_state="session",
            key=persist("lh_demo", DEMOS[0].name),
        )
        demo = get_demo(demo_name)
        st.caption(f"Licence: {demo.licence}. Source: {demo.source}.")
        return load_demo(demo_name), f"demo:{demo_name}", demo_name, None, None
    upload = kept_upload("Points file (CSV or Parquet)", "lh_up", type=["csv", "parquet", "pq"])
    if upload is None:
        st.info("Upload a file with one point per row and latitude/longitude columns.")
        st.stop()
    name, data = upload
    digest = hashlib.sha256(data).hexdigest()
    return load_upload(digest, data, name), digest, None, None, None


def choose_bbox(demo_name: str | None, digest: str, secure: bool) -> tuple[tuple, bool]:
    """The public bounding box (required) and whether to derive it from the data (demo only)."""
    options = ([DEMO_EXTENT] if demo_name else [CHOOSE]) + [r.name for r in REGIONS] + [CUSTOM]
    names = {
        DEMO_EXTENT: "this demo's documented extent",
        CHOOSE: "— choose a public region —",
        CUSTOM: "custom (enter the four values)",
        **{r.name: r.label for r in REGIONS},
    }
    choice = st.selectbox(
        "Bounding box (public parameter — never derived from the private points)",
        options,
        format_func=names.get,
        persist_state="session",
        key=persist(f"lh_region_{digest}", options[0]),
    )
    from_data = False
    if not secure:
        from_data = st.checkbox(
            "Derive the bbox from the data instead (demo mode only — not differentially private)",
            persist_state="session",
            key=persist("lh_bbdata"),
        )
    if from_data:
        return (-180.0, -90.0, 180.0, 90.0), True
    if choice == DEMO_EXTENT:
        return DEMO_BBOX[demo_name], False
    if choice == CHOOSE:
        st.info(
            "Choose the public region your points belong to (or enter a custom bounding box). "
            "It must be public knowledge, not read off the data: the whole world would put a "
            "city's points into one corner of the grid."
        )
        st.stop()
    if choice == CUSTOM:
        cols = st.columns(4)
        vals = [
            cols[i].number_input(
                label,
                value=None,
                format="%.5f",
                persist_state="session",
                key=persist(f"lh_bb{i}_{digest}"),
            )
            for i, label in enumerate(["min lon", "min lat", "max lon", "max lat"])
        ]
        if any(v is None for v in vals):
            st.info("Enter all four values of the public bounding box.")
            st.stop()
        return check_bbox(tuple(vals)), False
    return REGION_BY_NAME[choice].bbox, False


st.title("Location histograms")
st.caption(
    "Differentially private 2-D histograms of latitude/longitude points with HTF "
    "(Shaham et al., SIGSPATIAL 2021), compared with grid and tree baselines."
)
analyst = is_analyst()
noise = Noise.secure() if analyst else current_noise()  # analyst mode: never seeded
epsilon, htf_params = sidebar_parameters()

with user_errors():
    df, digest, demo_name, registry, dataset = choose_data(analyst)
    cache_key = digest if dataset is None else f"{digest}:{dataset.private_tables[0].sha256}"
    cols = list(map(str, df.columns))
    try:
        lat_guess, lon_guess = detect_lat_lon(df)
    except InputError:
        lat_guess, lon_guess = cols[0], cols[min(1, len(cols) - 1)]
    c1, c2, c3 = st.columns(3)
    lat_col = c1.selectbox(
        "Latitude column", cols, persist_state="session", key=persist(f"lh_lat_{digest}", lat_guess)
    )
    lon_col = c2.selectbox(
        "Longitude column",
        cols,
        persist_state="session",
        key=persist(f"lh_lon_{digest}", lon_guess),
    )
    rows = c3.select_slider(
        "Grid (rows = columns)",
        GRID_CHOICES,
        key=persist("lh_grid", DEFAULT_GRID),
        persist_state="session",
    )
    if not analyst:  # bad coordinates: say so (with the owner's details) before asking for a bbox
        check_points(cache_key, df, lat_col, lon_col)
    person, per_person = person_widgets(cols, digest)
    bbox, from_data = choose_bbox(demo_name, digest, noise.is_secure)

    all_methods = ["auto"] + [m for m in [*METHODS, *VARIANTS] if m != "auto"]  # recommended first
    methods = st.multiselect(
        "Methods", all_methods, format_func=method_label,
        key=persist("lh_methods", [m for m in DEFAULT_METHODS if m in all_methods]),
        persist_state="session",
    )  # fmt: skip
    st.info(WHEN_NOT_HTF)
    if not methods:
        st.info("Pick at least one method.")
        st.stop()

    if analyst:  # no refusal or count that depends on the values: an analyst sees releases only
        prep = prepare_total_cached(cache_key, df, lat_col, lon_col, bbox, rows, person, per_person)
    else:
        prep = prepare_cached(cache_key, df, lat_col, lon_col, bbox, rows, rows, from_data,
                              person, per_person, noise.seed)  # fmt: skip
    grid = prep.grid
    if prep.bbox_from_data:
        st.warning(DEMO_BBOX_LABEL)
    where = f"Grid {grid.ny} × {grid.nx} over bbox {[round(v, 5) for v in grid.bbox]}."
    if not analyst:
        where += (
            f" For you as the data owner only (not released): {prep.n_used:,} points inside, "
            f"{prep.n_dropped:,} outside or without coordinates"
            + (f", {prep.n_capped:,} left out by the per-person bound." if person else ".")
        )
    st.caption(f"Privacy unit: {prep.unit.describe()}.")
    st.caption(where)
    params = {
        "epsilon": epsilon, "methods": methods, "seed": noise.seed, "mode": noise.mode,
        "htf": htf_params, "grid": [grid.ny, grid.nx], "bbox": list(grid.bbox),
        "lat": lat_col, "lon": lon_col, "bbox_from_data": prep.bbox_from_data, "data": digest,
        "person": [person, per_person] if person else None,
    }  # fmt: skip
    params_json = json.dumps(params, sort_keys=True)
    k = len(methods)
    st.caption(
        f"**Build releases** charges ε {epsilon:g} per method, {k * epsilon:g} in total "
        f"({k} release(s), basic composition)"
        + (f", to the budget of dataset **{dataset.name}**." if dataset else ": recorded as an "
           "unregistered run (demo table or upload), not limited across runs.")
    )  # fmt: skip
    if st.button("Build releases", type="primary", key="lh_run"):
        st.session_state.pop(BUILD_KEY, None)  # a refused or failed build leaves nothing stale
        st.session_state.pop(EVAL_KEY, None)
        if registry is None:  # demo table or upload: recorded as an unregistered run
            try:
                registry = Registry()
            except InputError as err:
                st.warning(f"These releases are not recorded: {err}")
        args = (prep.F, grid, prep.bbox_from_data, noise, registry, dataset)
        st.session_state[BUILD_KEY] = build(params, params_json, *args)
        if dataset is not None:
            st.rerun()  # the dataset's budget caption above shows the new spend

result: Build | None = st.session_state.get(BUILD_KEY)
if result is None:
    st.info("Set the parameters, then press **Build releases**.")
    st.stop()
show_results(result, df, params_json, owner=not analyst)
if analyst:
    st.stop()  # no evaluation, tuning or teaching view on raw data in analyst mode

with st.expander("Evaluation settings (MRE uses the raw data: evaluation only)"):
    e1, e2, e3, e4 = st.columns(4)
    n_queries = int(
        e1.number_input(
            "Queries per size",
            10,
            5000,
            step=100,
            persist_state="session",
            key=persist("lh_q", 500),
        )
    )
    sizes = e2.multiselect(
        "Query sizes",
        [0.02, 0.06, 0.10],
        persist_state="session",
        key=persist("lh_sizes", [0.02, 0.06, 0.10]),
    )
    reps = int(
        e3.number_input("Repetitions", 1, 10, persist_state="session", key=persist("lh_reps", 3))
    )
    smoothing = float(
        e4.number_input(
            "Smoothing s", 0.0, 1e6, persist_state="session", key=persist("lh_smooth", 20.0)
        )
    )
ev = {"query_sizes": sorted(sizes), "queries": n_queries, "reps": reps, "smoothing": smoothing}
if not sizes:
    st.info("Pick at least one query size to evaluate.")
else:
    with user_errors():
        show_evaluation(
            result, prep.F, ev, json.dumps(ev, sort_keys=True), noise.seed,
            stale_build=result.params_json != params_json,
        )  # fmt: skip
with st.expander("Tuning: MRE against ε (uses the raw data: evaluation only)", key="lh_tune_open",
                 on_change="rerun") as tuning_box:  # fmt: skip
    if tuning_box.open:
        show_tuning(prep.F, methods, noise, params)
with st.expander("HTF step by step (teaching view)", key="lh_step_open", on_change="rerun") as box:
    if box.open:  # the expander keeps its state across reruns (keyed) and works only when open
        show_htf_stepper(prep.F, epsilon, htf_params, noise, params_json, prep.unit)
