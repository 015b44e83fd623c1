"""Location histograms: build DP spatial histograms (HTF and baselines), map them, compare MRE.

Thin page: widgets -> core.spatial -> core.viz.spatial -> st.*.
"""

from __future__ import annotations

import hashlib
import io
import json

import numpy as np
import pandas as pd
import streamlit as st
from streamlit_folium import st_folium

from core.data.demos import get_demo
from core.data.loading import load_table
from core.data.validation import detect_lat_lon
from core.errors import InputError
from core.spatial.demos import DEMO_BBOX, DEMOS, WORLD_BBOX
from core.spatial.evaluate import EVALUATION_LABEL, compare
from core.spatial.export import (
    DEMO_BBOX_LABEL,
    PRIVACY_UNIT,
    run_report,
    to_csv_text,
    to_geojson_text,
)
from core.spatial.methods import LABELS, METHODS, VARIANTS, htf_method_params
from core.spatial.pipeline import prepare
from core.viz.spatial import budget_chart, density_legend, mre_chart, release_map
from pages.common import current_noise, user_errors

EPS_CHOICES = [0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 1.0, 2.0, 5.0, 10.0]
PRT_CHOICES = [1e-4, 2e-4, 5e-4, 1e-3, 2e-3, 5e-3, 1e-2]
DEFAULT_METHODS = ["htf", "ug", "ag", "kdtree-geo", "quadtree", "privtree"]
SAMPLE_POINTS = 1500


@st.cache_data(show_spinner=False, max_entries=8)
def load_demo(name: str) -> pd.DataFrame:
    return get_demo(name).load()


@st.cache_data(show_spinner=False, max_entries=4)
def load_upload(digest: str, _data: bytes, filename: str) -> pd.DataFrame:
    return load_table(_data, name=filename)


@st.cache_data(show_spinner=False, max_entries=8)
def prepare_cached(digest: str, _df: pd.DataFrame, lat, lon, bbox, rows, cols, from_data):
    return prepare(
        _df, lat, lon, None if from_data else bbox, rows, cols, allow_data_bbox=from_data
    )


@st.cache_data(show_spinner=False, max_entries=8)
def run_cached(digest: str, params_json: str, _F: np.ndarray, _progress=None):
    p = json.loads(params_json)
    return compare(
        _F,
        p["epsilon"],
        p["methods"],
        p["query_sizes"],
        p["queries"],
        p["reps"],
        p["smoothing"],
        p["seed"],
        method_params=htf_method_params(p["methods"], p["htf"]),
        progress=_progress,
        keep_releases=True,
    )


st.title("Location histograms")
st.caption(
    "Differentially private 2-D histograms of latitude/longitude points with HTF "
    "(Shaham et al., SIGSPATIAL 2021), compared with grid and tree baselines."
)
noise = current_noise()
noise_info = noise.describe()

# -- sidebar: privacy parameters -------------------------------------------------------------
with st.sidebar:
    st.header("Privacy parameters")
    epsilon = st.select_slider(
        "Total epsilon (log scale)",
        options=EPS_CHOICES,
        value=0.5,
        help="Left: more privacy. Right: more accuracy.",
        key="lh_eps",
    )
    st.caption("← more privacy · more accuracy →")
    eps_prt = st.select_slider(
        "HTF partition budget per tree level", options=PRT_CHOICES, value=1e-3, key="lh_prt"
    )
    eps_height = st.number_input(
        "HTF eps_height (noisy N for the height)", 1e-6, 1.0, 1e-4, format="%.6f", key="lh_eh"
    )
    T = st.number_input("T (split-search iterations)", 1, 10, 3, key="lh_T")
    stop_count = st.number_input("Stop at noisy count ≤", 0, 100_000, 100, key="lh_sc")
    stop_cells = st.number_input("Stop below this many cells", 1, 1000, 5, key="lh_scells")
    height_mode = st.radio("HTF height", ["auto (noisy N)", "manual"], horizontal=True, key="lh_hm")
    height = (
        int(st.number_input("Height h", 1, 24, 10, key="lh_h")) if height_mode == "manual" else None
    )
    st.markdown("**HTF improvements** (off = faithful to the paper)")
    combine_pruned = st.checkbox("combine_pruned (inverse-variance at pruned nodes)", key="lh_cp")
    consistency = st.checkbox("consistency (GLS over the tree)", key="lh_cons")
    cap_height = st.checkbox("cap_height (partition ≤ half the budget)", key="lh_cap")
    st.caption(f"Privacy unit: {PRIVACY_UNIT}.")

with user_errors():
    # -- data -------------------------------------------------------------------------------
    source = st.radio("Data", ["Demo dataset", "Upload CSV/Parquet"], horizontal=True, key="lh_src")
    if source == "Demo dataset":
        names = [d.name for d in DEMOS]
        demo_name = st.selectbox(
            "Demo dataset",
            names,
            format_func=lambda n: f"{n} — {get_demo(n).description}",
            key="lh_demo",
        )
        demo = get_demo(demo_name)
        st.caption(f"Licence: {demo.licence}. Source: {demo.source}.")
        df = load_demo(demo_name)
        digest = f"demo:{demo_name}"
        default_bbox = DEMO_BBOX.get(demo_name, WORLD_BBOX)
        bbox_note = "documented public default for this demo"
    else:
        up = st.file_uploader(
            "Points file (CSV or Parquet)", type=["csv", "parquet", "pq"], key="lh_up"
        )
        if up is None:
            st.info("Upload a file with one point per row and latitude/longitude columns.")
            st.stop()
        data = up.getvalue()
        digest = hashlib.sha256(data).hexdigest()
        df = load_upload(digest, data, up.name)
        default_bbox = WORLD_BBOX
        bbox_note = "public default: the whole world — enter your area's public extent"

    cols = list(map(str, df.columns))
    try:
        lat_guess, lon_guess = detect_lat_lon(df)
    except InputError:
        lat_guess, lon_guess = cols[0], cols[min(1, len(cols) - 1)]
    c1, c2, c3 = st.columns(3)
    lat_col = c1.selectbox(
        "Latitude column", cols, index=cols.index(lat_guess), key=f"lh_lat_{digest}"
    )
    lon_col = c2.selectbox(
        "Longitude column", cols, index=cols.index(lon_guess), key=f"lh_lon_{digest}"
    )
    rows = c3.select_slider(
        "Grid (rows = columns)", [64, 128, 256, 512, 1024, 2048], value=256, key="lh_grid"
    )

    with st.expander("Bounding box (public parameter)", expanded=False):
        st.caption(f"Default: {bbox_note}. It must not be derived from the private points.")
        b = st.columns(4)
        bbox = tuple(
            float(
                b[i].number_input(
                    lbl, value=float(default_bbox[i]), format="%.5f", key=f"lh_bb{i}_{digest}"
                )
            )
            for i, lbl in enumerate(["min lon", "min lat", "max lon", "max lat"])
        )
        from_data = st.checkbox(
            "Derive from the data (demo mode only — not differentially private)",
            disabled=noise.is_secure,
            key="lh_bbdata",
        )
        from_data = from_data and not noise.is_secure

    all_methods = list(METHODS) + list(VARIANTS)
    methods = st.multiselect(
        "Methods",
        all_methods,
        default=[m for m in DEFAULT_METHODS if m in all_methods],
        format_func=lambda m: LABELS.get(m, m),
        key="lh_methods",
    )
    with st.expander("Evaluation settings (MRE uses the raw data: evaluation only)"):
        e1, e2, e3, e4 = st.columns(4)
        n_queries = int(e1.number_input("Queries per size", 10, 5000, 500, step=100, key="lh_q"))
        sizes = e2.multiselect(
            "Query sizes", [0.02, 0.06, 0.10], default=[0.02, 0.06, 0.10], key="lh_sizes"
        )
        reps = int(e3.number_input("Repetitions", 1, 10, 3, key="lh_reps"))
        smoothing = float(e4.number_input("Smoothing s", 0.0, 1e6, 20.0, key="lh_smooth"))
        basemap = st.toggle(
            "Basemap tiles (contacts OpenStreetMap: reveals the viewed area)", key="lh_tiles"
        )
        overlay = st.toggle("Overlay a raw-point sample (evaluation only)", key="lh_overlay")

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

    htf_params = {
        "eps_height": float(eps_height), "eps_prt_level": float(eps_prt), "T": int(T),
        "stop_count": float(stop_count), "stop_cells": int(stop_cells), "height": height,
        "combine_pruned": combine_pruned, "consistency": consistency, "cap_height": cap_height,
    }  # fmt: skip
    params = {
        "epsilon": float(epsilon), "methods": methods, "query_sizes": sorted(sizes),
        "queries": n_queries, "reps": reps, "smoothing": smoothing, "seed": noise.seed,
        "mode": noise.mode, "htf": htf_params, "grid": [grid.ny, grid.nx], "bbox": list(grid.bbox),
        "lat": lat_col, "lon": lon_col, "bbox_from_data": prep.bbox_from_data,
    }  # fmt: skip
    params_json = json.dumps(params, sort_keys=True)

    if st.button("Build releases and compare", type="primary", key="lh_run"):
        st.session_state["lh_last"] = params_json
    if st.session_state.get("lh_last") != params_json:
        st.info("Set the parameters, then press **Build releases and compare**.")
        st.stop()

    bar = st.progress(0.0, text="building releases…")
    comp = run_cached(
        digest, params_json, prep.F, _progress=lambda f, t: bar.progress(min(f, 1.0), text=t)
    )
    bar.empty()

releases = comp.releases
if noise.is_secure:
    st.success(
        "Secure mode: noise from OpenDP. Each method is a separate release; their budgets add up."
    )
else:
    st.warning(f"Mode: {noise.label}.")
if consistency or combine_pruned or cap_height:
    flags = ", ".join(
        f
        for f, on in (
            ("combine_pruned", combine_pruned),
            ("consistency", consistency),
            ("cap_height", cap_height),
        )
        if on
    )
    st.caption(f"HTF (modified): {flags}.")

st.subheader("Partitions")
sample = None
if overlay:
    step = max(1, len(df) // SAMPLE_POINTS)
    sample = (df[lon_col].to_numpy()[::step], df[lat_col].to_numpy()[::step])
fmap, skipped = release_map(
    releases, grid, noise_info, basemap=basemap, sample=sample, bbox_from_data=prep.bbox_from_data
)
st_folium(fmap, height=560, use_container_width=True, returned_objects=[], key="lh_map")
if skipped:
    st.caption("Not drawn (too many leaves for the map): " + ", ".join(skipped))
vmax = max(float(np.max(np.maximum(r.values / r.cells_per_leaf(), 0))) for r in releases.values())
st.plotly_chart(density_legend(vmax), key="lh_legend")
st.dataframe(
    pd.DataFrame(
        [
            {
                "method": LABELS.get(m, m),
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
st.plotly_chart(mre_chart(comp.rows), key="lh_mre")
mre_df = pd.DataFrame(comp.rows)
st.dataframe(mre_df, hide_index=True)

st.subheader("Budget")
st.plotly_chart(budget_chart(releases), key="lh_budget")
with st.expander("Budget ledgers"):
    for m, r in releases.items():
        st.markdown(f"**{LABELS.get(m, m)}**")
        st.dataframe(pd.DataFrame(r.ledger.to_records()), hide_index=True)

st.subheader("Downloads")
pick = st.selectbox(
    "Release to download", list(releases), format_func=lambda m: LABELS.get(m, m), key="lh_dl"
)
rel = releases[pick]
d1, d2, d3, d4 = st.columns(4)
d1.download_button(
    "Release GeoJSON",
    to_geojson_text(rel, grid, noise_info, prep.bbox_from_data),
    f"{pick}.geojson",
    "application/geo+json",
)
d2.download_button(
    "Release CSV",
    to_csv_text(rel, grid, noise_info, prep.bbox_from_data),
    f"{pick}.csv",
    "text/csv",
)
buf = io.StringIO()
mre_df.to_csv(buf, index=False)
d3.download_button("MRE CSV (evaluation only)", buf.getvalue(), "mre.csv", "text/csv")
report = run_report(params, noise_info, grid, comp.to_dict())
d4.download_button(
    "Run report (JSON)", json.dumps(report, indent=2), "run_report.json", "application/json"
)
