"""The location page's inputs: privacy parameters (sidebar), columns and grid, the public
bounding box, the methods, and the binning of the chosen points (pure, cached)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from core.data.validation import detect_lat_lon, validate_points
from core.errors import InputError
from core.privacy import Noise
from core.spatial.demos import DEMO_BBOX
from core.spatial.export import PRIVACY_UNIT
from core.spatial.methods import Door, location_method_names
from core.spatial.pipeline import DEFAULT_GRID, NO_USABLE_POINTS, Prepared, prepare
from core.spatial.regions import REGION_BY_NAME, REGIONS, check_bbox
from core.spatial.service import HTFOptions
from core.spatial.total_prepare import prepare_total
from core.spatial.unit import unit_from
from core.viz.spatial import method_label
from ui.data import DataChoice, Source
from ui.glossary import in_app
from ui.location.params import Columns
from ui.plan.location import planned_epsilon_choices
from ui.shell import is_analyst
from ui.state import kept, persist

EPS_CHOICES = [0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 1.0, 2.0, 5.0, 10.0]
PRT_CHOICES = [1e-4, 2e-4, 5e-4, 1e-3, 2e-3, 5e-3, 1e-2]
GRID_CHOICES = [64, 128, 256, 512, 1024, 2048]
DEFAULT_METHODS = ["auto"]  # Recommended (private choice) alone: one click, one charge
DEMO_EXTENT, CUSTOM, CHOOSE = "demo", "custom", "choose"


NO_PERSON = "— none: each point is the unit —"


def sidebar_parameters() -> tuple[float, HTFOptions]:
    """Total ε and HTF's parameters (sidebar), typed."""
    with st.sidebar:
        st.header("Privacy parameters")
        epsilon = st.select_slider(
            "Total ε (log scale)", options=planned_epsilon_choices(EPS_CHOICES),
            help="Left: more privacy. Right: more accuracy.", key=persist("lh_eps", 0.5),
        )  # fmt: skip
        st.caption("← more privacy · more accuracy →")
        eps_prt = st.select_slider(
            "HTF partition budget per tree level", options=PRT_CHOICES, key=persist("lh_prt", 1e-3)
        )
        eps_height = st.number_input(
            "HTF eps_height (noisy N for the height)", 1e-6, 1.0, format="%.6f",
            key=persist("lh_eh", 1e-4),
        )  # fmt: skip
        t = st.number_input("T (split-search iterations)", 1, 10, key=persist("lh_T", 3))
        stop_count = st.number_input("Stop at noisy count ≤", 0, 100_000, key=persist("lh_sc", 100))
        stop_cells = st.number_input(
            "Stop below this many cells", 1, 1000, key=persist("lh_scells", 5)
        )
        height_mode = st.radio(
            "HTF height", ["auto (noisy N)", "manual"], horizontal=True,
            key=persist("lh_hm", "auto (noisy N)"),
        )  # fmt: skip
        height = None
        if height_mode == "manual":
            height = int(
                st.number_input("Height h", 1, 24, persist_state="session", key=persist("lh_h", 10))
            )
        st.markdown("**HTF improvements** (off = faithful to the paper)")
        combine = st.checkbox(
            "combine_pruned (inverse-variance at pruned nodes)", key=persist("lh_cp", False)
        )
        consistency = st.checkbox("consistency (GLS over the tree)", key=persist("lh_cons", False))
        cap_height = st.checkbox(
            "cap_height (partition ≤ half the budget)", key=persist("lh_cap", False)
        )
        st.caption(f"Privacy unit (default, without a person column): {in_app(PRIVACY_UNIT)}.")
    htf = HTFOptions(
        eps_height=float(eps_height), eps_prt_level=float(eps_prt), T=int(t),
        stop_count=float(stop_count), stop_cells=int(stop_cells), height=height,
        combine_pruned=combine, consistency=consistency, cap_height=cap_height,
    )  # fmt: skip
    return float(epsilon), htf


def choose_columns(choice: DataChoice, df: pd.DataFrame) -> Columns:
    cols = list(map(str, df.columns))
    try:
        lat_guess, lon_guess = detect_lat_lon(df)
    except InputError:
        lat_guess, lon_guess = cols[0], cols[min(1, len(cols) - 1)]
    c1, c2, c3 = st.columns(3)
    lat = c1.selectbox(
        "Latitude column", cols, persist_state="session",
        key=kept(f"lh_lat_{choice.key}", cols, lat_guess),
    )  # fmt: skip
    lon = c2.selectbox(
        "Longitude column", cols, persist_state="session",
        key=kept(f"lh_lon_{choice.key}", cols, lon_guess),
    )  # fmt: skip
    rows = c3.select_slider(
        "Grid (rows = columns)", GRID_CHOICES, persist_state="session",
        key=persist("lh_grid", DEFAULT_GRID),
    )  # fmt: skip
    if not is_analyst():  # unusable coordinates: dropped; the owner is told how many (labelled)
        _note_unusable(_count_unusable(choice.cache_key, df, lat, lon))
    declared = choice.dataset.uid if choice.dataset is not None else None
    person, per_person = _person(cols, choice.key, declared if declared in cols else None)
    return Columns(lat, lon, int(rows), person, per_person)


def _person(
    cols: list[str], data_key: str, declared: str | None = None
) -> tuple[str | None, int | None]:
    """Which column says whose point it is (none: the unit is one point; a registered
    dataset's declared unit column by default), and K."""
    c1, c2 = st.columns(2)
    options = [NO_PERSON, *cols]
    choice = c1.selectbox(
        "Person column (whose point is it?)", options, persist_state="session",
        key=kept(f"lh_person_{data_key}", options, declared or NO_PERSON),
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


def choose_bbox(choice: DataChoice, secure: bool) -> tuple[tuple, bool]:
    """The public bounding box (required) and whether to derive it from the data (demo only)."""
    demo = choice.demo.name if choice.source is Source.DEMO and choice.demo else None
    options = ([DEMO_EXTENT] if demo in DEMO_BBOX else [CHOOSE]) + [r.name for r in REGIONS]
    options.append(CUSTOM)
    names = {
        DEMO_EXTENT: "this demo's documented extent",
        CHOOSE: "— choose a public region —",
        CUSTOM: "custom (enter the four values)",
        **{r.name: r.label for r in REGIONS},
    }
    pick = st.selectbox(
        "Bounding box (public parameter — never derived from the private points)",
        options, format_func=names.get, persist_state="session",
        key=kept(f"lh_region_{choice.key}", options, options[0]),
    )  # fmt: skip
    if not secure and st.checkbox(
        "Derive the bbox from the data instead (demo mode only — not differentially private)",
        persist_state="session", key=persist("lh_bbdata", False),
    ):  # fmt: skip
        return (-180.0, -90.0, 180.0, 90.0), True
    if pick == DEMO_EXTENT:
        return DEMO_BBOX[demo], False
    if pick == CHOOSE:
        st.info(
            "Choose the public region your points belong to (or enter a custom bounding box). "
            "It must be public knowledge, not read off the data: the whole world would put a "
            "city's points into one corner of the grid."
        )
        st.stop()
    if pick == CUSTOM:
        cols = st.columns(4)
        vals = [
            cols[i].number_input(
                label,
                value=None,
                format="%.5f",
                persist_state="session",
                key=persist(f"lh_bb{i}_{choice.key}"),
            )  # fmt: skip
            for i, label in enumerate(["min lon", "min lat", "max lon", "max lat"])
        ]
        if any(v is None for v in vals):
            st.info("Enter all four values of the public bounding box.")
            st.stop()
        return check_bbox(tuple(vals)), False
    return REGION_BY_NAME[pick].bbox, False


def all_methods() -> list[str]:
    """The methods the page offers for release: the table's (core/spatial/methods.py), the
    same names `dpx release --method` takes; Recommended (auto) first."""
    return list(location_method_names(Door.RELEASE))


def choose_methods() -> list[str]:
    options = all_methods()
    methods = st.multiselect(
        "Methods", options, format_func=method_label, persist_state="session",
        key=kept("lh_methods", options, DEFAULT_METHODS),
        help="Each method is a separate release, charged separately (their ε add up).",
    )  # fmt: skip
    if not methods:
        st.info("Pick at least one method.")
        st.stop()
    return list(methods)


def bin_points(
    choice: DataChoice, df: pd.DataFrame, c: Columns, bbox, from_data, seed: int | None
) -> Prepared:
    """The points binned on the public grid, each person keeping at most K points (a seeded
    sample in demo mode). Analyst: binning that never refuses on the values and shows no count
    (`prepare_total`); owner: validated, with the counts for the owner."""
    if is_analyst():
        return _prepare_total(
            choice.cache_key, df, c.lat, c.lon, bbox, c.rows, c.person, c.per_person
        )
    return _prepare(
        choice.cache_key, df, c.lat, c.lon, bbox, c.rows, from_data, c.person, c.per_person, seed
    )


@st.cache_data(show_spinner=False, max_entries=8, ttl=3600)
def _prepare(key: str, _df: pd.DataFrame, lat, lon, bbox, rows, from_data, person, k, seed):
    """Pure binning (no Streamlit element inside: cached values are replayed across sessions)."""
    return prepare(
        _df, lat, lon, None if from_data else bbox, rows, rows, allow_data_bbox=from_data,
        unit=unit_from(person, k), noise=Noise.from_seed(seed),
    )  # fmt: skip


@st.cache_data(show_spinner=False, max_entries=8, ttl=3600)
def _prepare_total(key: str, _df: pd.DataFrame, lat, lon, bbox, rows, person, k) -> Prepared:
    return prepare_total(_df, lat, lon, bbox, rows, unit=unit_from(person, k), noise=Noise.secure())


def _note_unusable(counts: tuple[int, int]) -> None:
    """The owner's view of the rows left out for a coordinate outside its domain (issue 27):
    never a refusal for some rows (an analyst sees nothing of it; their binning is total)."""
    unusable, total = counts
    if unusable == total:
        raise InputError(NO_USABLE_POINTS.replace("(--lat/--lon)", "above"))
    if unusable:
        st.caption(
            f"{unusable} row(s) have a latitude or longitude that is missing, not a number or "
            "outside [-90, 90] / [-180, 180]: they are left out, like points outside the "
            "bounding box. Private: shown to you, the data owner, only."
        )


@st.cache_data(show_spinner=False, max_entries=8, ttl=3600)
def _count_unusable(key: str, _df: pd.DataFrame, lat: str, lon: str) -> tuple[int, int]:
    """(rows with an unusable coordinate, rows) — pure; a missing column raises InputError."""
    return validate_points(_df, lat, lon).n_unusable, len(_df)
