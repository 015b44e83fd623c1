"""Location histograms page: build the charged releases, then (owner only) evaluate them.

Build (`core.spatial.releases.build_releases`): one release per chosen method, each charged
once, before it is built — to a registered dataset's budget in the release registry (a refusal
is shown and recorded, nothing is built), or, for a demo table or an upload, recorded as an
unregistered run (a seeded run as a demo run), exactly as `dpx htf` does. The map and the
downloads show exactly these charged releases.

Evaluate (`core.spatial.releases.evaluate`, owner mode only): the MRE of the charged releases
and of evaluation-only rebuilds against the raw data. What the rebuilds would cost is shown as
evaluation cost: never released, never charged.

Session rules (issue 8): nothing here is cached (no Streamlit element inside a cached function);
results live in `st.session_state` with the parameters they were made with.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass

import numpy as np
import pandas as pd
import streamlit as st
from streamlit_folium import st_folium

from core.privacy import Noise
from core.registry import Dataset, Registry
from core.spatial.evaluate import EVALUATION_LABEL, stream
from core.spatial.export import (
    csv_sidecar_text,
    release_file_stem,
    run_report,
    to_csv_text,
    to_geojson_text,
)
from core.spatial.grid import Grid
from core.spatial.methods import htf_method_params
from core.spatial.release import Release, mechanism_table
from core.spatial.releases import (
    ChargedRelease,
    Evaluation,
    LedgerCharge,
    RegistryCharge,
    build_releases,
    evaluate,
)
from core.spatial.unit import unit_from
from core.viz.spatial import budget_chart, method_label, mre_chart, release_map
from pages.common import persist
from pages.lh_auto import show_selection

BUILD_KEY = "lh_result"
EVAL_KEY = "lh_evaluation"
SAMPLE_POINTS = 1500


@dataclass(frozen=True)
class Build:
    """One finished build: the parameters it was made with and the charged releases."""

    params_json: str
    params: dict
    charged: tuple[ChargedRelease, ...]
    grid: Grid
    bbox_from_data: bool
    noise_info: dict
    dataset: str | None
    recorded: str  # what the registry recorded, in words

    @property
    def releases(self) -> dict[str, Release]:
        return {c.method: c.release for c in self.charged}


@dataclass(frozen=True)
class Scored:
    """An evaluation of one build (owner only; not differentially private)."""

    build_json: str
    params_json: str
    evaluation: Evaluation


def _recorded(registry: Registry | None, dataset: Dataset | None, built, mode: str) -> str:
    ids = ", ".join(f"#{c.charge_id}" for c in built if c.charge_id is not None)
    if registry is None:
        return "Not recorded: the release registry could not be opened (unregistered data)."
    if mode == "seeded":
        return f"Recorded as demo runs {ids} (seeded noise: not releases, nothing charged)."
    if dataset is None:
        return (
            f"Recorded as unregistered runs {ids} (demo table or upload: not limited across "
            "runs). Register the dataset (`dpx dataset add`) to give it a budget."
        )
    eps_left, _ = registry.remaining(dataset.name)
    total = sum(c.epsilon for c in built)
    return (
        f"Charged to dataset **{dataset.name}**: releases {ids}, ε {built[0].epsilon:g} each, "
        f"{total:g} in total (basic composition). Remaining ε {eps_left:g} of "
        f"{dataset.policy.epsilon_total:g}."
    )


def build(
    params: dict,
    params_json: str,
    F: np.ndarray,
    grid: Grid,
    bbox_from_data: bool,
    noise: Noise,
    registry: Registry | None,
    dataset: Dataset | None,
) -> Build:
    """Charge, then build, one release per chosen method (status drawn here, outside caches).

    Privacy claim: each method's release is ε-DP (ε = params["epsilon"]) for the unit in
    `params["person"]` (one point, or each person with at most K points: F was bounded so when
    it was binned); it is charged ε before its builder reads F, so k methods cost k·ε (basic
    composition) of the registered dataset's budget — the same `PlannedRelease` sets the
    charge and the builder's own accountant. A set that does not fit is refused whole (recorded,
    nothing built). Demo tables and uploads are recorded as unregistered runs, not limited.
    """
    methods, eps = params["methods"], float(params["epsilon"])
    if registry is not None:
        name = None if dataset is None else dataset.name
        charge = RegistryCharge(registry, name, noise.mode, {**params, "via": "app"}, grid)
    else:  # unregistered data and no registry: an in-memory total that fits exactly k·ε
        charge = LedgerCharge(eps * len(methods))
    with st.status(f"Building {len(methods)} release(s)…", expanded=True) as status:
        built = build_releases(
            F,
            methods,
            eps,
            lambda m: stream(noise.seed, 0, f"release:{m}"),  # secure unless demo mode
            charge,
            method_params=htf_method_params(methods, params["htf"]),
            unit=unit_of(params),
        )
        status.update(label="Releases built and charged", state="complete", expanded=False)
    recorded = _recorded(registry, dataset, built, noise.mode)
    return Build(
        params_json, params, tuple(built), grid, bbox_from_data, noise.describe(),
        None if dataset is None else dataset.name, recorded,
    )  # fmt: skip


def unit_of(params: dict):
    """The privacy unit a build's parameters name (`params["person"]`: [column, K] or absent)."""
    column, k = params.get("person") or (None, None)
    return unit_from(column, k)


def run_evaluation(b: Build, F: np.ndarray, ev: dict, ev_json: str, seed: int | None) -> Scored:
    """Score the build's charged releases against F (owner only; charges nothing)."""
    with st.status("Evaluating — evaluation only, uses the raw data…", expanded=True) as status:
        bar = st.progress(0.0)
        evaluation = evaluate(
            list(b.charged),
            F,
            sizes=ev["query_sizes"],
            n_queries=ev["queries"],
            reps=ev["reps"],
            smoothing=ev["smoothing"],
            seed=seed,
            method_params=htf_method_params(b.params["methods"], b.params["htf"]),
            progress=lambda f, text: bar.progress(min(f, 1.0), text=text),
            unit=unit_of(b.params),
        )
        status.update(label="Evaluation done", state="complete", expanded=False)
    return Scored(b.params_json, ev_json, evaluation)


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


def evaluation_table(scored: Scored) -> pd.DataFrame:
    df = pd.DataFrame(scored.evaluation.table())
    return df.assign(method=df["method"].map(method_label))


def show_evaluation(
    b: Build, F: np.ndarray, ev: dict, ev_json: str, seed: int | None, stale_build: bool
) -> None:
    """Owner-only section: the Evaluate button and the last evaluation of this build."""
    st.subheader("Evaluate (owner only)")
    st.caption(
        f"MRE — {EVALUATION_LABEL}. Scores the charged releases above against the raw points, "
        "plus evaluation-only rebuilds of each method (error bars); nothing here is released."
    )
    if st.button(
        "Evaluate the releases (evaluation only — uses raw data)",
        key="lh_eval",
        disabled=stale_build,
        help="Rebuild the releases first: the parameters changed." if stale_build else None,
    ):
        st.session_state.pop(EVAL_KEY, None)
        st.session_state[EVAL_KEY] = run_evaluation(b, F, ev, ev_json, seed)
    scored: Scored | None = st.session_state.get(EVAL_KEY)
    if scored is None or scored.build_json != b.params_json:
        st.info("Press **Evaluate** to score these releases (evaluation only).")
        return
    if scored.params_json != ev_json:
        st.warning(
            "The evaluation below used **other evaluation settings** than the ones above. "
            "Press **Evaluate** again to use the current ones."
        )
    e = scored.evaluation
    st.dataframe(evaluation_table(scored), hide_index=True, key="lh_eval_table")
    st.plotly_chart(mre_chart(e.comparison.rows), key="lh_mre")
    st.info(
        f"Evaluation cost: {e.comparison.params['reps']} rebuild(s) per method used "
        f"ε = {e.evaluation_epsilon:g} in total. Evaluation only — never released and not "
        "charged to any budget; the spend above counts only the charged releases."
    )
    buf = io.StringIO()
    pd.DataFrame(e.comparison.rows).to_csv(buf, index=False)
    st.download_button(
        "MRE CSV (evaluation only)", buf.getvalue(), "mre-evaluation-only.csv", "text/csv",
        key="lh_dl_mre", on_click="ignore",
    )  # fmt: skip


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


def show_results(b: Build, df: pd.DataFrame, current_json: str, owner: bool) -> None:
    """The charged releases: mode, map, charges, budget breakdown and downloads."""
    if b.params_json != current_json:
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
    flags = [f for f in ("combine_pruned", "consistency", "cap_height") if b.params["htf"][f]]
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
    pick = st.selectbox(
        "Release to download", list(releases), format_func=method_label,
        persist_state="session", key=persist("lh_dl", next(iter(releases))),
    )  # fmt: skip
    if pick not in releases:  # a persisted choice from an earlier build
        pick = next(iter(releases))
    rel = releases[pick]
    stem = release_file_stem(pick, b.noise_info)
    args = (rel, b.grid, b.noise_info, b.bbox_from_data)
    d1, d2, d3, d4 = st.columns(4)
    d1.download_button(
        "Release GeoJSON", to_geojson_text(*args), f"{stem}.geojson", "application/geo+json",
        key="lh_dl_geojson", on_click="ignore",
    )  # fmt: skip
    d2.download_button(
        "Release CSV", to_csv_text(*args), f"{stem}.csv", "text/csv", key="lh_dl_csv",
        on_click="ignore",
    )  # fmt: skip
    d3.download_button(
        "Release CSV metadata (JSON)", csv_sidecar_text(*args), f"{stem}.csv.json",
        "application/json", key="lh_dl_csv_meta", on_click="ignore",
        help="The CSV is plain (one header row); its method, ε, grid and mode are in this file.",
    )  # fmt: skip
    report = run_report(b.params, b.noise_info, b.grid, report_results(b))
    d4.download_button(
        "Run report (JSON)", json_text(report), "run_report.json", "application/json",
        key="lh_dl_report", on_click="ignore",
    )  # fmt: skip
