"""Location histograms: build DP spatial histograms (HTF and baselines), map them, compare MRE.

Thin page: widgets -> core.spatial -> core.viz.spatial -> st.*.

Session rules (issue 8): no Streamlit element is ever called inside a cached function (cached
values are shared between sessions and replayed); the last build is kept in `st.session_state`
with the parameters it was built with, so reruns, downloads, reloads of the page state and
navigation never lose it; every widget keeps its value across navigation via `persist`.
"""

from __future__ import annotations

import hashlib
import io
import json
from dataclasses import dataclass

import numpy as np
import pandas as pd
import streamlit as st
from streamlit_folium import st_folium

from core.data.demos import get_demo
from core.data.loading import load_table
from core.data.validation import detect_lat_lon, validate_points
from core.errors import InputError
from core.spatial.demos import DEMO_BBOX, DEMOS
from core.spatial.evaluate import EVALUATION_LABEL, Comparison, compare
from core.spatial.export import (
    DEMO_BBOX_LABEL,
    PRIVACY_UNIT,
    csv_sidecar_text,
    release_file_stem,
    run_report,
    to_csv_text,
    to_geojson_text,
)
from core.spatial.grid import Grid
from core.spatial.methods import METHODS, VARIANTS, htf_method_params
from core.spatial.pipeline import DEFAULT_GRID as CLI_DEFAULT_GRID
from core.spatial.pipeline import prepare
from core.spatial.regions import REGION_BY_NAME, REGIONS, check_bbox
from core.viz.spatial import budget_chart, method_label, mre_chart, release_map
from pages.common import current_noise, kept_upload, persist, user_errors
from pages.htf_stepper import show_htf_stepper
from pages.lh_auto import WHEN_NOT_HTF, show_selection

EPS_CHOICES = [0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 1.0, 2.0, 5.0, 10.0]
PRT_CHOICES = [1e-4, 2e-4, 5e-4, 1e-3, 2e-3, 5e-3, 1e-2]
GRID_CHOICES = [64, 128, 256, 512, 1024, 2048]
DEFAULT_GRID = CLI_DEFAULT_GRID  # one default for app and CLI: the paper's 1024 (see cli.py)
DEFAULT_METHODS = ["auto", "htf", "ug", "ag", "kdtree-geo", "quadtree", "privtree"]
SAMPLE_POINTS = 1500
RESULT_KEY = "lh_result"
DEMO_EXTENT = "demo"
CUSTOM = "custom"
CHOOSE = "choose"


@dataclass(frozen=True)
class Build:
    """One finished build: what it was built from, and what it released."""

    params_json: str
    params: dict
    comparison: Comparison
    grid: Grid
    bbox_from_data: bool
    noise_info: dict


@st.cache_data(show_spinner=False, max_entries=8)
def load_demo(name: str) -> pd.DataFrame:
    return get_demo(name).load()


@st.cache_data(show_spinner=False, max_entries=4)
def load_upload(digest: str, _data: bytes, filename: str) -> pd.DataFrame:
    return load_table(_data, name=filename)


@st.cache_data(show_spinner=False, max_entries=8)
def prepare_cached(digest: str, _df: pd.DataFrame, lat, lon, bbox, rows, cols, from_data):
    """Pure binning (no Streamlit element inside: cached values are replayed across sessions)."""
    return prepare(
        _df, lat, lon, None if from_data else bbox, rows, cols, allow_data_bbox=from_data
    )


@st.cache_data(show_spinner=False, max_entries=8)
def check_points(digest: str, _df: pd.DataFrame, lat: str, lon: str) -> None:
    """Raise InputError for bad coordinates (pure; exceptions are not cached, results are)."""
    validate_points(_df, lat, lon, drop_nan=True)


def build(params: dict, params_json: str, F: np.ndarray, prep, noise_info: dict) -> Build:
    """Run the comparison with a progress bar drawn here, outside any cache."""
    with st.status("Building releases…", expanded=True) as status:
        bar = st.progress(0.0)
        comp = compare(
            F,
            params["epsilon"],
            params["methods"],
            params["query_sizes"],
            params["queries"],
            params["reps"],
            params["smoothing"],
            params["seed"],
            method_params=htf_method_params(params["methods"], params["htf"]),
            progress=lambda f, text: bar.progress(min(f, 1.0), text=text),
            keep_releases=True,
        )
        status.update(label="Releases built", state="complete", expanded=False)
    return Build(params_json, params, comp, prep.grid, prep.bbox_from_data, noise_info)


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
            int(st.number_input("Height h", 1, 24, key=persist("lh_h", 10)))
            if height_mode == "manual"
            else None
        )
        st.markdown("**HTF improvements** (off = faithful to the paper)")
        combine = st.checkbox(
            "combine_pruned (inverse-variance at pruned nodes)", key=persist("lh_cp")
        )
        consistency = st.checkbox("consistency (GLS over the tree)", key=persist("lh_cons"))
        cap_height = st.checkbox("cap_height (partition ≤ half the budget)", key=persist("lh_cap"))
        st.caption(f"Privacy unit: {PRIVACY_UNIT}.")
    htf = {
        "eps_height": float(eps_height), "eps_prt_level": float(eps_prt), "T": int(T),
        "stop_count": float(stop_count), "stop_cells": int(stop_cells), "height": height,
        "combine_pruned": combine, "consistency": consistency, "cap_height": cap_height,
    }  # fmt: skip
    return float(epsilon), htf


def choose_data() -> tuple[pd.DataFrame, str, str | None]:
    """(table, digest, demo name or None); stops the page until a file is uploaded."""
    source = st.radio(
        "Data", ["Demo dataset", "Upload CSV/Parquet"], horizontal=True,
        key=persist("lh_src", "Demo dataset"),
    )  # fmt: skip
    if source == "Demo dataset":
        demo_name = st.selectbox(
            "Demo dataset",
            [d.name for d in DEMOS],
            format_func=lambda n: f"{n} — {get_demo(n).description}",
            key=persist("lh_demo", DEMOS[0].name),
        )
        demo = get_demo(demo_name)
        st.caption(f"Licence: {demo.licence}. Source: {demo.source}.")
        return load_demo(demo_name), f"demo:{demo_name}", demo_name
    upload = kept_upload("Points file (CSV or Parquet)", "lh_up", type=["csv", "parquet", "pq"])
    if upload is None:
        st.info("Upload a file with one point per row and latitude/longitude columns.")
        st.stop()
    name, data = upload
    digest = hashlib.sha256(data).hexdigest()
    return load_upload(digest, data, name), digest, None


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
        key=persist(f"lh_region_{digest}", options[0]),
    )
    from_data = False
    if not secure:
        from_data = st.checkbox(
            "Derive the bbox from the data instead (demo mode only — not differentially private)",
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
                label, value=None, format="%.5f", key=persist(f"lh_bb{i}_{digest}")
            )
            for i, label in enumerate(["min lon", "min lat", "max lon", "max lat"])
        ]
        if any(v is None for v in vals):
            st.info("Enter all four values of the public bounding box.")
            st.stop()
        return check_bbox(tuple(vals)), False
    return REGION_BY_NAME[choice].bbox, False


def show_results(b: Build, df: pd.DataFrame, current_json: str) -> None:
    releases = b.comparison.releases
    if b.params_json != current_json:
        st.warning(
            "The results below are from the **previous build** — the parameters have changed "
            "since. Press **Build releases and compare** to rebuild with the current ones."
        )
    if b.noise_info.get("mode") == "secure":
        st.success(
            "Secure mode: noise from OpenDP. Each method is a separate release; their budgets "
            "add up."
        )
    else:
        st.warning(
            f"Mode: seeded (seed {b.noise_info.get('seed')}) — {b.noise_info.get('warning')}."
        )
    flags = [f for f in ("combine_pruned", "consistency", "cap_height") if b.params["htf"][f]]
    if flags:
        st.caption(f"HTF (modified): {', '.join(flags)}.")

    show_selection(releases)  # what "Recommended (private choice)" built, and why
    st.subheader("Partitions")
    c1, c2, c3 = st.columns(3)
    boundaries = c1.toggle("Boundaries and place names (offline)", key=persist("lh_bounds", True))
    basemap = c2.toggle(
        "Basemap tiles (contacts OpenStreetMap: reveals the viewed area)", key=persist("lh_tiles")
    )
    overlay = c3.toggle("Raw-point sample (evaluation only)", key=persist("lh_overlay"))
    sample = None
    if overlay:
        step = max(1, len(df) // SAMPLE_POINTS)
        lat, lon = b.params["lat"], b.params["lon"]
        if lat in df and lon in df:
            sample = (df[lon].to_numpy()[::step], df[lat].to_numpy()[::step])
    fmap, skipped = release_map(
        releases, b.grid, b.noise_info, basemap=basemap, sample=sample,
        bbox_from_data=b.bbox_from_data, boundaries=boundaries,
    )  # fmt: skip
    st_folium(fmap, height=560, use_container_width=True, returned_objects=[], key="lh_map")
    if skipped:
        st.caption("Not drawn (too many leaves for the map): " + ", ".join(skipped))
    st.dataframe(
        pd.DataFrame(
            [
                {
                    "method": method_label(m),
                    "leaves": r.n_leaves,
                    **{f"eps {k}": v for k, v in r.epsilon.items()},
                }
                for m, r in releases.items()
            ]
        ).fillna(0.0),
        hide_index=True,
    )

    st.subheader("Accuracy")
    st.caption(f"MRE — {EVALUATION_LABEL}.")
    st.plotly_chart(mre_chart(b.comparison.rows), key="lh_mre")
    mre_df = pd.DataFrame(b.comparison.rows)
    shown = mre_df.assign(method=mre_df["method"].map(method_label))
    st.dataframe(shown, hide_index=True)

    st.subheader("Budget")
    st.plotly_chart(budget_chart(releases), key="lh_budget")
    with st.expander("Budget ledgers"):
        for m, r in releases.items():
            st.markdown(f"**{method_label(m)}**")
            st.dataframe(pd.DataFrame(r.ledger.to_records()), hide_index=True)
    show_downloads(b, mre_df)


def show_downloads(b: Build, mre_df: pd.DataFrame) -> None:
    releases = b.comparison.releases
    st.subheader("Downloads")
    pick = st.selectbox(
        "Release to download", list(releases), format_func=method_label,
        key=persist("lh_dl", next(iter(releases))),
    )  # fmt: skip
    if pick not in releases:  # a persisted choice from an earlier build
        pick = next(iter(releases))
    rel = releases[pick]
    stem = release_file_stem(pick, b.noise_info)
    d1, d2, d3, d4, d5 = st.columns(5)
    d1.download_button(
        "Release GeoJSON",
        to_geojson_text(rel, b.grid, b.noise_info, b.bbox_from_data),
        f"{stem}.geojson",
        "application/geo+json",
        key="lh_dl_geojson",
    )
    d2.download_button(
        "Release CSV",
        to_csv_text(rel, b.grid, b.noise_info, b.bbox_from_data),
        f"{stem}.csv",
        "text/csv",
        key="lh_dl_csv",
    )
    d3.download_button(
        "Release CSV metadata (JSON)",
        csv_sidecar_text(rel, b.grid, b.noise_info, b.bbox_from_data),
        f"{stem}.csv.json",
        "application/json",
        key="lh_dl_csv_meta",
        help="The CSV is plain (one header row); its method, ε, grid and mode are in this file.",
    )
    buf = io.StringIO()
    mre_df.to_csv(buf, index=False)
    d4.download_button(
        "MRE CSV (evaluation only)", buf.getvalue(), "mre-evaluation-only.csv", "text/csv",
        key="lh_dl_mre",
    )  # fmt: skip
    report = run_report(b.params, b.noise_info, b.grid, b.comparison.to_dict())
    d5.download_button(
        "Run report (JSON)", json.dumps(report, indent=2), "run_report.json",
        "application/json", key="lh_dl_report",
    )  # fmt: skip


st.title("Location histograms")
st.caption(
    "Differentially private 2-D histograms of latitude/longitude points with HTF "
    "(Shaham et al., SIGSPATIAL 2021), compared with grid and tree baselines."
)
noise = current_noise()
epsilon, htf_params = sidebar_parameters()

with user_errors():
    df, digest, demo_name = choose_data()
    cols = list(map(str, df.columns))
    try:
        lat_guess, lon_guess = detect_lat_lon(df)
    except InputError:
        lat_guess, lon_guess = cols[0], cols[min(1, len(cols) - 1)]
    c1, c2, c3 = st.columns(3)
    lat_col = c1.selectbox("Latitude column", cols, key=persist(f"lh_lat_{digest}", lat_guess))
    lon_col = c2.selectbox("Longitude column", cols, key=persist(f"lh_lon_{digest}", lon_guess))
    rows = c3.select_slider(
        "Grid (rows = columns)", GRID_CHOICES, key=persist("lh_grid", DEFAULT_GRID)
    )
    check_points(digest, df, lat_col, lon_col)  # bad coordinates: say so before asking for a bbox
    bbox, from_data = choose_bbox(demo_name, digest, noise.is_secure)

    all_methods = ["auto"] + [m for m in [*METHODS, *VARIANTS] if m != "auto"]  # recommended first
    methods = st.multiselect(
        "Methods", all_methods, format_func=method_label,
        key=persist("lh_methods", [m for m in DEFAULT_METHODS if m in all_methods]),
    )  # fmt: skip
    st.info(WHEN_NOT_HTF)
    with st.expander("Evaluation settings (MRE uses the raw data: evaluation only)"):
        e1, e2, e3, e4 = st.columns(4)
        n_queries = int(
            e1.number_input("Queries per size", 10, 5000, step=100, key=persist("lh_q", 500))
        )
        sizes = e2.multiselect(
            "Query sizes", [0.02, 0.06, 0.10], key=persist("lh_sizes", [0.02, 0.06, 0.10])
        )
        reps = int(e3.number_input("Repetitions", 1, 10, key=persist("lh_reps", 3)))
        smoothing = float(e4.number_input("Smoothing s", 0.0, 1e6, key=persist("lh_smooth", 20.0)))

    if not methods or not sizes:
        st.info("Pick at least one method and one query size.")
        st.stop()

    prep = prepare_cached(digest, df, lat_col, lon_col, bbox, rows, rows, from_data)
    grid = prep.grid
    if prep.bbox_from_data:
        st.warning(DEMO_BBOX_LABEL)
    st.caption(
        f"Grid {grid.ny} × {grid.nx} over bbox {[round(v, 5) for v in grid.bbox]}. "
        f"For you as the data owner only (not released): {prep.n_used:,} points inside, "
        f"{prep.n_dropped:,} outside or without coordinates."
    )
    params = {
        "epsilon": epsilon, "methods": methods, "query_sizes": sorted(sizes),
        "queries": n_queries, "reps": reps, "smoothing": smoothing, "seed": noise.seed,
        "mode": noise.mode, "htf": htf_params, "grid": [grid.ny, grid.nx], "bbox": list(grid.bbox),
        "lat": lat_col, "lon": lon_col, "bbox_from_data": prep.bbox_from_data,
        "data": digest,
    }  # fmt: skip
    params_json = json.dumps(params, sort_keys=True)

    if st.button("Build releases and compare", type="primary", key="lh_run"):
        st.session_state.pop(RESULT_KEY, None)  # a failed build leaves no stale result behind
        st.session_state[RESULT_KEY] = build(params, params_json, prep.F, prep, noise.describe())

result: Build | None = st.session_state.get(RESULT_KEY)
if result is None:
    st.info("Set the parameters, then press **Build releases and compare**.")
    st.stop()
show_results(result, df, params_json)
with st.expander("HTF step by step (teaching view)"):
    show_htf_stepper(prep.F, epsilon, htf_params, noise, params_json)
