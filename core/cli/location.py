"""`dpx htf`, `dpx release` and `dpx compare`: location histograms from the command line.

`dpx htf` and `dpx release --method M` are governed releases (`core.governance.govern`): the
bounding box, grid, unit and columns are checked before anything is charged; the dataset (or,
for files given directly, an unregistered run) is charged ε before the points are read; the
leaves and the mechanisms that drew are recorded. The owner sees the exact counts of points
used and dropped, labelled as owner-only; an analyst (`DPX_MODE=analyst`) sees what the
release record holds and nothing else. `dpx compare` is evaluation against the raw points:
owner only, never a release.

`--out x.csv` writes a plain CSV (one header row) and its metadata to the JSON sidecar
`x.csv.json`; `--out x.geojson` carries the metadata inline. Files are written whole or not at
all (temporary file, then rename).

This module is the commands' arguments (checked while parsing, before anything is charged); the
commands themselves are `core.cli.location_run`, imported when one runs.
"""

from __future__ import annotations

import argparse
import re
import textwrap

from core import cliargs
from core.cli.common import add_dataset_argument
from core.spatial.export import CSV_SIDECAR_SUFFIX
from core.spatial.methods import CATALOG, DEFAULT_COMPARE, Door, location_method_names, method
from core.spatial.pipeline import DEFAULT_GRID
from core.spatial.regions import REGION_BY_NAME
from core.spatial.unit import MAX_POINTS_LIMIT

# `dpx release --method`'s choices: the methods the table offers for release (the page offers
# the same ones, core/spatial/methods.py)
RELEASE_METHODS = location_method_names(Door.RELEASE)


GRID_HELP = (
    f"grid rows N (N x N unless --grid-cols; default {DEFAULT_GRID}, as in the app: the HTF "
    "paper's evaluation grid, on which the demos' cluster widths are defined, so CLI, app and "
    "paper numbers are comparable)"
)


# "--bbox -118.6,33.7,-117.9,34.4": argparse would read a value starting with "-" as an option;
# values that start like a negative number (also comma lists of them) are values here.
_NEGATIVE_VALUE = re.compile(r"^-\d+$|^-\d*\.\d+$|^-\d*\.?\d*(e-?\d+)?,[-\d.,e]*$")


MAX_POINTS_PER_PERSON = cliargs.Integer(1, MAX_POINTS_LIMIT, example="--max-points-per-person 10")


def _add_data_args(p) -> None:
    p._negative_number_matcher = _NEGATIVE_VALUE
    p.add_argument(
        "input",
        type=cliargs.INPUT_FILE,
        metavar="INPUT",
        help="CSV or Parquet file with one point per row",
    )
    p.add_argument(
        "--lat", type=cliargs.NAME, default=None, help="latitude column (auto-detected if omitted)"
    )
    p.add_argument(
        "--lon", type=cliargs.NAME, default=None, help="longitude column (auto-detected if omitted)"
    )
    p.add_argument(
        "--bbox",
        type=cliargs.BBOX,
        default=None,
        help="public bounding box MINLON,MINLAT,MAXLON,MAXLAT (this or --region is required "
        "unless --seed: a demo run then derives it from the data and says so)",
    )
    p.add_argument(
        "--region",
        type=cliargs.NAME,
        default=None,
        help="a named public region instead of --bbox: " + ", ".join(REGION_BY_NAME),
    )
    p.add_argument(
        "--uid",
        metavar="COL",
        type=cliargs.NAME,
        default=None,
        help="person column (whose point is it?): the release then protects each person, who "
        "keeps at most --max-points-per-person K of their points (a random subset); without it "
        "the unit is one point",
    )
    p.add_argument(
        "--max-points-per-person",
        metavar="K",
        type=MAX_POINTS_PER_PERSON,
        default=None,
        help="with --uid: at most K points per person; every sensitivity is K times a point's",
    )
    p.add_argument("--grid", type=cliargs.GRID, default=DEFAULT_GRID, help=GRID_HELP)
    p.add_argument("--grid-cols", type=cliargs.GRID, default=None, help="grid columns M")
    p.add_argument("--epsilon", type=cliargs.RELEASE_EPSILON, required=True, help="total privacy budget")
    p.add_argument(
        "--engine",
        choices=("numpy", "spark"),
        default="numpy",
        help="where the data pass (binning into the grid) runs: in memory, or on Apache Spark "
        "for inputs larger than memory (pip install -e '.[spark]', Java 17; needs --lat/--lon)",
    )
    p.add_argument(
        "--spark-master", type=cliargs.TEXT, metavar="URL", help="Spark master (default local[2])"
    )


def register(sub, common) -> None:
    p = sub.add_parser(
        "htf",
        parents=[common],
        help="release a DP location histogram with HTF",
        description="Release an epsilon-DP location histogram with HTF (Shaham et al. 2021).",
    )
    _add_data_args(p)
    p.add_argument(
        "--eps-height", type=cliargs.EPSILON, default=1e-4, help="budget for the noisy N"
    )
    p.add_argument(
        "--eps-prt-level", type=cliargs.EPSILON, default=1e-3, help="partition budget per level"
    )
    p.add_argument("--T", type=cliargs.SPLIT_ITERATIONS, default=3, help="split-search iterations")
    p.add_argument(
        "--stop-count",
        type=cliargs.STOP_COUNT,
        default=100,
        help="prune when the noisy count is <= this",
    )
    p.add_argument(
        "--stop-cells",
        type=cliargs.STOP_CELLS,
        default=5,
        help="prune nodes with fewer cells than this",
    )
    p.add_argument(
        "--out",
        type=cliargs.LOCATION_RELEASE,
        default=None,
        help="write the release to FILE.geojson (metadata inline) or FILE.csv (plain CSV; "
        f"metadata in the JSON sidecar FILE.csv{CSV_SIDECAR_SUFFIX})",
    )
    add_dataset_argument(p, optional=("input",))
    p.set_defaults(handler=run_htf)

    p = sub.add_parser(
        "release",
        parents=[common],
        help="release a DP location histogram with a chosen method, or let 'auto' choose privately",
        description=RELEASE_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_data_args(p)
    p.add_argument(
        "--method",
        required=True,
        type=_method_name,
        choices=RELEASE_METHODS,  # checked while parsing: a bad name is refused before any charge
        metavar="METHOD",
        help="auto (recommended: private choice) or another method listed above",
    )
    p.add_argument(
        "--out",
        type=cliargs.LOCATION_RELEASE,
        default=None,
        help="write the release to FILE.geojson or FILE.csv (plain CSV; metadata in the JSON "
        f"sidecar FILE.csv{CSV_SIDECAR_SUFFIX})",
    )
    add_dataset_argument(p, optional=("input",))
    p.set_defaults(handler=run_release)

    c = sub.add_parser(
        "compare",
        parents=[common],
        help="compare HTF and baselines by mean relative error (evaluation only, not DP)",
        description=COMPARE_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_data_args(c)
    c.add_argument(
        "--methods",
        type=cliargs.TEXT,
        default=",".join(DEFAULT_COMPARE),
        help="comma-separated method names (listed above); default: %(default)s",
    )
    c.add_argument("--queries", type=cliargs.QUERIES, default=2000, help="random queries per size")
    c.add_argument(
        "--query-sizes",
        type=cliargs.QUERY_SIZES,
        default="0.02,0.06,0.10",
        help="area fractions, comma-separated",
    )
    c.add_argument("--reps", type=cliargs.REPS, default=3, help="repetitions")
    c.add_argument("--smoothing", type=cliargs.SMOOTHING, default=20.0, help="RE smoothing s")
    c.set_defaults(handler=run_compare)


def _methods_list(door: Door) -> str:
    """The methods `door` offers, one a line: name and label (core/spatial/methods.py)."""
    return "\n".join(f"  {m.name:<17}{m.label}" for m in CATALOG if m.offered(door))


RELEASE_DESCRIPTION = (
    textwrap.fill(
        "Release an epsilon-DP location histogram. --method auto spends 1 % of epsilon on a "
        "noisy number of points and builds UG below 330 points per unit of noise, PrivTree "
        "otherwise (the choice and its reasons are part of the output); the rest builds it.",
        78,
    )
    + "\n\nmethods (--method):\n"
    + _methods_list(Door.RELEASE)
)


COMPARE_DESCRIPTION = (
    textwrap.fill(
        "Build each method's epsilon-DP release of the points' 2-D histogram several times and "
        "score it by mean relative error (MRE) on random rectangle queries of the given sizes.",
        78,
    )
    + "\n"
    + textwrap.fill(
        "The scores read the raw data: they are for evaluation only (the data owner, or "
        "synthetic/public data) and are NOT differentially private.",
        78,
    )
    + "\n\nmethods (--methods):\n"
    + _methods_list(Door.COMPARE)
)


def run_htf(args) -> dict | str:
    from core.cli.location_run import run_location  # the heavy modules, only when it runs

    return run_location(args, "htf")


def run_release(args) -> dict | str:
    from core.cli.location_run import run_location

    return run_location(args, _check_method(args.method))


def run_compare(args) -> dict | str:
    from core.cli.location_run import compare_command

    return compare_command(args)


def _method_name(text: str) -> str:
    return str(text).strip().lower()


def _check_method(name: str) -> str:
    """The release method called `name` (refused, naming the choices, if the table does not
    offer it for release)."""
    return method(name, Door.RELEASE).name
