"""The location page's results: the kept build's releases on the map, their charges, the
budget breakdown and the downloads (exactly these releases, and the run report)."""

from __future__ import annotations

import json

import pandas as pd
import streamlit as st
from streamlit_folium import st_folium

from core.spatial.export import (
    csv_sidecar_text,
    release_file_stem,
    run_report,
    to_csv_text,
    to_geojson_text,
)
from core.spatial.release import mechanism_table
from core.viz.spatial import budget_chart, method_label, release_map
from ui.downloads import download
from ui.location.release import Build
from ui.location.request import LocationBuildRequest
from ui.location.selection import show_selection
from ui.state import kept, persist

SAMPLE_POINTS = 1500


def show_charges(b: Build) -> None:
    """What was charged for the releases on screen (from the build's charged records)."""
    st.markdown(b.recorded)
    st.dataframe(
        pd.DataFrame(
            [
                {
                    "method": method_label(c.method),
                    "registry id": c.charge_id,
                    "ε charged": c.epsilon,
                    "leaves": c.release.n_leaves,
                    "noise": c.noise_label,
                }
                for c in b.charged
            ]
        ),
        hide_index=True,
        key="lh_charges",
    )


def report_results(b: Build) -> dict:
    """The run report's results: the charged releases (public parameters and charges only)."""
    return {
        "recorded": b.recorded,
        "releases": [
            {
                "method": c.method,
                "registry_id": c.charge_id,
                "epsilon": c.epsilon,
                "epsilon_breakdown": c.release.epsilon,
                "leaves": c.release.n_leaves,
                "noise": c.noise_label,
            }
            for c in b.charged
        ],
    }


def json_text(obj: dict) -> str:
    return json.dumps(obj, indent=2, default=str)


def show_results(b: Build, df: pd.DataFrame, current: LocationBuildRequest, owner: bool) -> None:
    """The charged releases: mode, map, charges, budget breakdown and downloads."""
    if b.fingerprint != current.fingerprint():
        st.warning(
            "The releases below are from the **previous build** — the parameters have changed "
            "since. Press **Build releases** to build (and charge) new ones."
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
    flags = b.request.htf_flags
    if flags:
        st.caption(f"HTF (modified): {', '.join(flags)}.")
    releases = b.releases
    show_selection(releases)  # what "Recommended (private choice)" built, and why
    st.subheader("Partitions")
    c1, c2, c3 = st.columns(3)
    boundaries = c1.toggle(
        "Boundaries and place names (offline)",
        persist_state="session",
        key=persist("lh_bounds", True),
    )
    basemap = c2.toggle(
        "Basemap tiles (contacts OpenStreetMap: reveals the viewed area)",
        persist_state="session",
        key=persist("lh_tiles"),
    )
    sample = None
    if owner and c3.toggle(
        "Raw-point sample (evaluation only)", persist_state="session", key=persist("lh_overlay")
    ):
        step = max(1, len(df) // SAMPLE_POINTS)
        lat, lon = b.request.columns.lat, b.request.columns.lon
        if lat in df and lon in df:
            sample = (df[lon].to_numpy()[::step], df[lat].to_numpy()[::step])
    fmap, skipped = release_map(
        releases, b.grid, b.noise_info, basemap=basemap, sample=sample,
        bbox_from_data=b.bbox_from_data, boundaries=boundaries,
    )  # fmt: skip
    st_folium(fmap, height=560, use_container_width=True, returned_objects=[], key="lh_map")
    if skipped:
        st.caption("Not drawn (too many leaves for the map): " + ", ".join(skipped))
    st.subheader("Charged releases")
    show_charges(b)
    st.plotly_chart(budget_chart(releases), key="lh_budget")
    with st.expander("Mechanisms (how each release split its ε)"):
        for m, r in releases.items():
            st.markdown(f"**{method_label(m)}**")
            st.dataframe(pd.DataFrame(mechanism_table(r)), hide_index=True)
    show_downloads(b)


def show_downloads(b: Build) -> None:
    """Downloads of exactly the charged releases, and the run report (parameters, charges)."""
    releases = b.releases
    st.subheader("Downloads")
    options = list(releases)
    pick = st.selectbox(
        "Release to download", options, format_func=method_label,
        persist_state="session", key=kept("lh_dl", options, options[0]),
    )  # fmt: skip
    rel = releases[pick]
    stem = release_file_stem(pick, b.noise_info)
    args = (rel, b.grid, b.noise_info, b.bbox_from_data)
    seed = b.seed
    d1, d2, d3, d4 = st.columns(4)
    download(
        d1, "Release GeoJSON", to_geojson_text(*args), f"{stem}.geojson", "application/geo+json",
        key="lh_dl_geojson", seed=seed,
    )  # fmt: skip
    download(d2, "Release CSV", to_csv_text(*args), f"{stem}.csv", "text/csv", key="lh_dl_csv",
             seed=seed)  # fmt: skip
    download(
        d3, "Release CSV metadata (JSON)", csv_sidecar_text(*args), f"{stem}.csv.json",
        "application/json", key="lh_dl_csv_meta", seed=seed,
        help="The CSV is plain (one header row); its method, ε, grid and mode are in this file.",
    )  # fmt: skip
    report = run_report(b.request, b.request.noise, b.grid, report_results(b))
    download(
        d4, "Run report (JSON)", json_text(report), "run_report.json", "application/json",
        key="lh_dl_report", seed=seed,
    )  # fmt: skip
