"""`dpx release`: one epsilon-DP location histogram with any method, or `auto` (issue 10 contract).

```
dpx release INPUT --lat COL --lon COL --bbox MINLON,MINLAT,MAXLON,MAXLAT [--grid N] --epsilon E
            --method auto|htf|htf+|ug|ag|kdtree-geo|kdtree-uniform|quadtree|privtree|identity|uniform
            [--seed S] [--out FILE.geojson|FILE.csv] [--json]
```

`--json` prints the same object as `dpx htf --json` with "method" = the method actually built,
"requested_method", and for `auto` a "selection" object (its epsilon, the noisy features, the
rule that fired). Reading, binning and the export formats are `dpx htf`'s (core/spatial/cli.py).
"""

from __future__ import annotations

from core import cliargs
from core.errors import InputError
from core.privacy import Accountant, Cost, Noise
from core.registry.cli_hooks import add_dataset_argument, govern_htf
from core.spatial.cli import _add_data_args, _load, owner_counts, release_json
from core.spatial.export import (
    CSV_SIDECAR_SUFFIX,
)
from core.spatial.methods import LABELS, get_method

RELEASE_METHODS = (
    "auto", "htf", "htf+", "ug", "ag", "kdtree-geo", "kdtree-uniform", "quadtree", "privtree",
    "identity", "uniform", "dawa", "hb",
)  # fmt: skip


def register(sub, common) -> None:
    p = sub.add_parser(
        "release",
        parents=[common],
        help="release a DP location histogram with a chosen method, or let 'auto' choose privately",
        description="Release an epsilon-DP location histogram. --method auto spends a small, "
        "share of epsilon on noisy features of the data and picks the method by fixed "
        "rules (the choice and its reasons are part of the output); the rest builds it.",
    )
    _add_data_args(p)
    p.add_argument(
        "--method",
        required=True,
        type=_method_name,
        choices=RELEASE_METHODS,  # checked while parsing: a bad name is refused before any charge
        metavar="METHOD",
        help="auto (recommended: private choice) or one of: " + ", ".join(RELEASE_METHODS[1:]),
    )
    p.add_argument(
        "--out",
        type=cliargs.OUTPUT_FILE,
        default=None,
        help="write the release to FILE.geojson or FILE.csv (plain CSV; metadata in the JSON "
        f"sidecar FILE.csv{CSV_SIDECAR_SUFFIX})",
    )
    add_dataset_argument(p, optional=("input",))  # registry (issue 12): charged like `dpx htf`
    p.set_defaults(handler=govern_htf(run_release))


def _method_name(text: str) -> str:
    return str(text).strip().lower()


def _check_method(name: str) -> str:
    method = str(name).strip().lower()
    if method not in RELEASE_METHODS:
        raise InputError(f"unknown --method '{name}'. Choose from: {', '.join(RELEASE_METHODS)}.")
    return method


def run_release(args) -> dict | str:
    method = _check_method(args.method)
    out = args.out
    if out and not out.lower().endswith((".geojson", ".json", ".csv")):
        raise InputError(f"--out must end in .geojson or .csv, got '{out}'.")
    noise = Noise.from_seed(args.seed)
    data = _load(args, noise)
    accountant = Accountant(noise, budget=Cost(args.epsilon))
    rel = get_method(method)(data.F, args.epsilon, accountant, unit=data.unit)
    result = release_json(rel, data, noise, out, method=rel.method)
    result["requested_method"] = method
    result["label"] = rel.info.get("label") or LABELS.get(rel.method, rel.method)
    selection = rel.info.get("selection")
    if selection is not None:
        result["selection"] = selection.to_dict()
    return result if args.json else _text(result, data)


def _text(result: dict, data) -> str:
    eps = result["epsilon"]
    lines = [
        f"{result['label']} release ({result['method']}, requested {result['requested_method']}): "
        f"{result['n_leaves']} leaves, mode {result['mode']}",
        "epsilon: total "
        + f"{eps['total']:g} = "
        + " + ".join(f"{k} {v:g}" for k, v in eps.items() if k != "total"),
    ]
    sel = result.get("selection")
    if sel:
        feats = ", ".join(f"{k} {v:.4g}" for k, v in sel["features"].items())
        lines.append(f"choice: rule '{sel['rule']}' ({sel['condition']}); noisy features: {feats}")
    lines.append(f"privacy unit: {data.unit.describe()}")
    lines.append(owner_counts(data))
    if "warning" in result:
        lines.append(result["warning"])
    lines.append(
        f"written to {result['out']}"
        if "out" in result
        else "use --out FILE.geojson|FILE.csv or --json for the leaves"
    )
    return "\n".join(lines)
