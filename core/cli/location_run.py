"""The commands behind `dpx htf`, `dpx release` and `dpx compare` (their arguments are
`core.cli.location`, which imports this module only when a command runs).

`run_location` is one governed location histogram: the bounding box, grid, unit and columns are
checked before anything is charged; the dataset (or, for files given directly, an unregistered
run) is charged ε before the points are read; the leaves and the mechanisms that drew are
recorded. `compare_command` is evaluation against the raw points: owner only, never a release.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from core.cli.common import (
    declared_schema,
    registry_info,
    registry_line,
    release_view,
    resolve,
    single_table,
    view_text,
)
from core.data.declared import TableSchema
from core.data.schema import require_columns
from core.errors import InputError
from core.files import write_text, write_texts
from core.governance import Role, current_role, govern, require_owner
from core.governance.artefacts import artefact_of, to_json
from core.governance.location import location_request
from core.governance.origin import Origin
from core.privacy import Noise, UnitKind
from core.registry import Tool
from core.spatial.evaluate import EVALUATION_LABEL, compare, stream
from core.spatial.export import (
    CSV_SIDECAR_SUFFIX,
    DEMO_BBOX_LABEL,
    csv_sidecar_text,
    leaves_json,
    to_csv_text,
    to_geojson_text,
)
from core.spatial.io import read_points_table
from core.spatial.methods import LABELS, parse_methods
from core.spatial.pipeline import Prepared, parse_bbox, prepare
from core.spatial.record import location_artefact
from core.spatial.regions import check_bbox, region_bbox
from core.spatial.release import charge_rows
from core.spatial.service import HTFOptions, LocationParams, LocationPrepared, run
from core.spatial.service import prepare as prepare_location
from core.spatial.unit import unit_from

ROW_IS_PERSON_GUARANTEE = (
    "row-level epsilon-DP: neighbouring datasets differ by one row, and the dataset declares "
    "each row one person"
)
OWNER_COUNTS_NOTE = (
    "n_points_*: exact counts, private - for you, the data owner, only (never written to --out; "
    "an analyst never sees them). Dropped: outside the bbox, or a coordinate missing, not a "
    "number or outside [-90, 90] / [-180, 180]."
)


def bbox_from_args(args) -> tuple[float, float, float, float] | None:
    if args.bbox and getattr(args, "region", None):
        raise InputError("give either --bbox or --region, not both.")
    if getattr(args, "region", None):
        return region_bbox(args.region)
    return check_bbox(parse_bbox(args.bbox)) if args.bbox else None


def unit_of(args):
    """The privacy unit `--uid`/`--max-points-per-person` ask for (both, or neither)."""
    return unit_from(getattr(args, "uid", None), getattr(args, "max_points_per_person", None))


def _load(args, noise: Noise | None = None, total: bool = False) -> Prepared:
    """Read and bin INPUT; with `--uid`, each person keeps at most K points (drawn with `noise`,
    the run's own source: secure, or the seeded demo stream). Unusable coordinates are dropped
    on every path; `total` (an analyst's run) refuses nothing on the data either (too few
    points, none inside the bbox): the outcome may not depend on one private row."""
    if not args.epsilon > 0:
        raise InputError(f"--epsilon must be > 0, got {args.epsilon:g}.")
    unit = unit_of(args)
    bbox = bbox_from_args(args)
    if bbox is None and args.seed is None:
        raise InputError(
            "no --bbox given. The bounding box is public and must not come from the private data: "
            "pass --bbox MINLON,MINLAT,MAXLON,MAXLAT or --region NAME (or add --seed for a "
            "labelled demo run)."
        )
    if getattr(args, "engine", "numpy") == "spark":
        if unit.column is not None:
            raise InputError(
                "--uid is not supported with --engine spark yet: bin on numpy (the default) "
                "or drop --uid (the unit is then one point)."
            )
        return _load_spark(args, bbox, total)
    from core.spatial.scan import ScanUnavailable, scan_prepare

    options = {
        "bbox": bbox,
        "rows": args.grid,
        "cols": args.grid_cols,
        "allow_data_bbox": args.seed is not None,
        "unit": unit,
        "noise": Noise.from_seed(args.seed) if noise is None else noise,
        "total": total,
    }
    try:  # binned where the file lies (DuckDB): memory does not grow with the file
        return scan_prepare(args.input, args.lat, args.lon, **options)
    except ScanUnavailable:  # a file DuckDB cannot read: the careful reader explains
        df = read_points_table(args.input, args.lat, args.lon, unit.column)
        return prepare(df, args.lat, args.lon, **options)


def _load_spark(args, bbox, total: bool = False) -> Prepared:
    """The data pass on Spark (issue 11); F is identical to the in-memory path's."""
    from core.sparkutil import spark_failure, spark_session
    from core.spatial.spark_pass import prepare_spark

    if not (args.lat and args.lon):
        raise InputError("--engine spark needs the coordinate columns: pass --lat COL --lon COL.")
    session = spark_session(args.spark_master)
    try:
        return prepare_spark(
            session,
            args.input,
            args.lat,
            args.lon,
            bbox,
            args.grid,
            args.grid_cols,
            allow_data_bbox=args.seed is not None,
            total=total,
        )
    except InputError:
        raise
    except Exception as err:  # noqa: BLE001 - a Spark read/analysis failure: one line
        raise spark_failure(f"bin the points of {args.input}", err) from None


def release_json(rel, data: Prepared, noise: Noise, out, method: str) -> dict:
    """Write `--out` (GeoJSON, or a plain CSV with its JSON sidecar) and return the `--json`
    object that `dpx htf` and `dpx release` share (issue 10: the same object). Nothing here
    adds noise: it reports the release `rel` (its ε parts, the mechanisms that drew with their
    share of the charge, its unit, the noisy leaves) and, for the data owner, the point counts
    inside and outside the bbox (never written into `out`)."""
    info = noise.describe()
    if out and out.lower().endswith(".csv"):  # the CSV and its sidecar appear together or not
        write_texts(
            (out, to_csv_text(rel, data.grid, info, data.bbox_from_data)),
            (out + CSV_SIDECAR_SUFFIX, csv_sidecar_text(rel, data.grid, info, data.bbox_from_data)),
        )
    elif out:
        write_whole(out, to_geojson_text(rel, data.grid, info, data.bbox_from_data))
    height = rel.info.get("height")
    result = {
        "method": method,
        "mode": noise.mode,
        "noise": info,
        "epsilon": rel.epsilon,
        "height": None if height is None else int(height),
        "params": rel.params,
        "privacy_unit": rel.unit.guarantee(),
        "unit": rel.unit.to_json(),
        "grid": data.grid.describe(),
        "n_points_used": data.n_used,
        "n_points_dropped": data.n_dropped,
        **({"n_points_over_person_bound": data.n_capped} if data.unit.column else {}),
        "n_points_note": OWNER_COUNTS_NOTE,
        "n_leaves": rel.n_leaves,
        "mechanisms": charge_rows(rel),
        "leaves": leaves_json(rel),
    }
    if data.bbox_from_data:
        result["warning"] = DEMO_BBOX_LABEL
    if out:
        result["out"] = out
        if out.lower().endswith(".csv"):
            result["metadata"] = out + CSV_SIDECAR_SUFFIX
    return result


def _use_dataset(args, target) -> None:
    """A registered dataset supplies INPUT, and its unit column is the person column (the
    planners' commands; a release reads the dataset's unit in `core.spatial.service.prepare`)."""
    d = target.dataset
    args.input = single_table(d, "release")
    if d.uid:
        if args.uid not in (None, d.uid):
            raise InputError(f"--uid {args.uid} differs from dataset '{d.name}''s unit {d.uid}.")
        args.uid = d.uid
        if args.max_points_per_person is None:
            raise InputError(
                f"dataset '{d.name}' protects people (column {d.uid}), who may have many "
                "points: add --max-points-per-person K (each person then keeps at most K "
                "points, chosen at random)."
            )


def location_params(args, method: str) -> LocationParams:
    """The CLI's edge: `dpx htf` / `dpx release` arguments as the typed `LocationParams` the
    page builds from its widgets too. The argparse namespace goes no further than this."""
    bbox = bbox_from_args(args)
    htf = HTFOptions()
    if hasattr(args, "eps_height"):  # `dpx htf`'s own options
        htf = HTFOptions(
            eps_height=float(args.eps_height),
            eps_prt_level=float(args.eps_prt_level),
            T=int(args.T),
            stop_count=float(args.stop_count),
            stop_cells=int(args.stop_cells),
        )
    return LocationParams(
        method=method,
        epsilon=args.epsilon,
        bbox=bbox,
        rows=args.grid,
        cols=args.grid_cols,
        lat=args.lat,
        lon=args.lon,
        person=args.uid,
        max_points=args.max_points_per_person,
        htf=htf,
        bbox_from_data=bbox is None and args.seed is not None and not args.dataset,
    )


def _bin(
    prepared: LocationPrepared,
    path: str,
    noise: Noise,
    total: bool,
    engine: str = "numpy",
    spark_master: str | None = None,
    schema: TableSchema | None = None,
) -> Prepared:
    """Read and bin INPUT on the prepared grid; each person keeps at most K points (drawn with
    `noise`, the run's own source). Unusable coordinates are dropped on every path; `total` (an
    analyst's run) refuses nothing on the data either: the outcome may not depend on one
    private row. `schema`: a registered table's declared schema, read as declared (no other
    reader is tried)."""
    p = prepared.params
    bbox = None if prepared.grid is None else prepared.grid.bbox
    if engine == "spark" and schema is not None:  # Spark reads DuckDB's declared conversion
        from core.data.relation import write_declared
        from core.files import work_directory

        with work_directory("dpx-spark-") as work:
            declared = write_declared(path, schema, Path(work) / "declared.parquet")
            return _load_spark_typed(p, bbox, str(declared), spark_master, total)
    if engine == "spark":
        return _load_spark_typed(p, bbox, path, spark_master, total)
    from core.spatial.scan import ScanUnavailable, scan_prepare

    options = {
        "bbox": bbox,
        "rows": p.rows,
        "cols": p.cols,
        "allow_data_bbox": p.bbox_from_data,
        "unit": prepared.spatial_unit,
        "noise": noise,
        "total": total,
    }
    if schema is not None:  # declared: read as declared, never by another reader's inference
        return scan_prepare(path, p.lat, p.lon, schema=schema, **options)
    try:  # binned where the file lies (DuckDB): memory does not grow with the file
        return scan_prepare(path, p.lat, p.lon, **options)
    except ScanUnavailable:  # a file DuckDB cannot read: the careful reader explains
        df = read_points_table(path, p.lat, p.lon, prepared.spatial_unit.column)
        return prepare(df, p.lat, p.lon, **options)


def _load_spark_typed(p: LocationParams, bbox, path: str, master, total: bool) -> Prepared:
    from core.sparkutil import spark_failure, spark_session
    from core.spatial.spark_pass import prepare_spark

    session = spark_session(master)
    try:
        return prepare_spark(
            session, path, p.lat, p.lon, bbox, p.rows, p.cols,
            allow_data_bbox=p.bbox_from_data, total=total,
        )  # fmt: skip
    except InputError:
        raise
    except Exception as err:  # noqa: BLE001 - a Spark read/analysis failure: one line
        raise spark_failure(f"bin the points of {path}", err) from None


def _engine_checks(args, prepared: LocationPrepared) -> None:
    """The data pass's own refusals, before anything is charged."""
    if getattr(args, "engine", "numpy") != "spark":
        return
    if prepared.unit.column is not None:
        raise InputError(
            "--uid is not supported with --engine spark yet: bin on numpy (the default) "
            "or drop --uid (the unit is then one point)."
        )
    if not (args.lat and args.lon):
        raise InputError("--engine spark needs the coordinate columns: pass --lat COL --lon COL.")


def run_location(args, method: str) -> dict | str:
    """One governed location histogram (`dpx htf`, `dpx release --method M`).

    Privacy claim: `core.spatial.service.run`'s: `method`'s mechanisms draw through an
    accountant holding `prepared.cost` (the composition of the mechanisms or stage budgets it
    states), charged to the dataset (or recorded as an unregistered run) before INPUT is read;
    the unit is `prepared.unit` (one row; each row one person, as a dataset registered
    --row-is-unit declares; or each person with at most --max-points-per-person points). A
    coordinate outside its domain is dropped like a point outside the bbox (issue 27); for an
    analyst nothing after the charge is refused on the data.
    """
    target = resolve(args, Tool.LOCATION.value, files=("input",))
    path, schema = args.input, None
    if target.dataset is not None:
        path = single_table(target.dataset, "release")
        schema = declared_schema(target.dataset)
    elif not path:
        raise InputError(f"dpx {args.command} needs INPUT (a CSV/Parquet file) or --dataset NAME.")
    if target.dataset is None and args.seed is None and bbox_from_args(args) is None:
        raise InputError(
            "no --bbox given. The bounding box is public and must not come from the private "
            "data: pass --bbox MINLON,MINLAT,MAXLON,MAXLAT or --region NAME (or add --seed for "
            "a labelled demo run)."
        )
    prepared = prepare_location(location_params(args, method), target.dataset)
    _engine_checks(args, prepared)
    out = args.out
    if out and not out.lower().endswith((".geojson", ".json", ".csv")):
        raise InputError(f"--out must end in .geojson or .csv, got '{out}'.")
    p = prepared.params
    columns = {"latitude": p.lat, "longitude": p.lon, "person": prepared.spatial_unit.column}
    # the owner's own file is named (a registered dataset's path is not kept)
    door = Origin.cli({"input": path} if target.dataset is None else {}, seed=args.seed)
    request = location_request(
        prepared,
        role=target.role,
        dataset=target.dataset,
        noise=release_noise(target.noise, prepared.method),
        door=door,
        extra_checks=(lambda: require_columns(path, columns),),
    )
    engine = getattr(args, "engine", "numpy")
    master = getattr(args, "spark_master", None)

    def compute(accountant):
        # seeded: the person sample the page draws; analysts: no refusal on the data's values
        data = _bin(
            prepared, path, target.noise, target.role is Role.ANALYST, engine, master, schema
        )
        return run(prepared, data, accountant), data

    governed = govern(
        target.registry, request, compute, lambda r: to_json(location_artefact(r[0], r[1].grid))
    )
    rel, data = governed.result
    if target.role is Role.ANALYST:
        return _analyst_output(target.registry, governed.record, args)
    result = release_json(rel, data, target.noise, out, method=rel.method)
    result["requested_method"] = method
    result["claim_unit"] = prepared.unit.to_json()
    if prepared.unit.kind is UnitKind.ROW_IS_PERSON:  # not "a person with k points ..."
        result["privacy_unit"] = ROW_IS_PERSON_GUARANTEE
    result["label"] = rel.info.get("label") or LABELS.get(rel.method, rel.method)
    selection = rel.info.get("selection")
    if selection is not None:
        result["selection"] = selection.to_dict()
    if governed.record is not None:
        result["registry"] = registry_info(target.registry, governed.record)
    if args.json:
        return result
    text = _text(result, data, prepared)
    return text + ("\n" + registry_line(result["registry"]) if "registry" in result else "")


def release_noise(noise: Noise, method: str) -> Noise:
    """The noise `method`'s release draws: the secure sampler, or in a seeded demo run the
    method's own stream, the one the location page draws from (`ui.location.release`), so
    `dpx release --seed S --method M` releases what the page's build with seed S does."""
    return noise if noise.is_secure else stream(noise.seed, 0, f"release:{method}")


def _analyst_output(registry, record, args) -> dict | str:
    """What an analyst gets: the release record, and `--out` written from it."""
    view = release_view(registry, record)
    if args.out:
        rel, grid = _release_of(record)
        info = Noise.secure().describe()
        if args.out.lower().endswith(".csv"):
            write_texts(
                (args.out, to_csv_text(rel, grid, info)),
                (args.out + CSV_SIDECAR_SUFFIX, csv_sidecar_text(rel, grid, info)),
            )
        else:
            write_whole(args.out, to_geojson_text(rel, grid, info))
        view["out"] = args.out
    if args.json:
        return view
    art = view["result"]
    headline = (
        f"{art['label']} release: {len(art['leaves'])} leaves on a {art['grid']['rows']} x "
        f"{art['grid']['cols']} grid" + (f", written to {args.out}" if args.out else "")
    )
    return view_text(view, headline)


def _release_of(record):
    """The `Release` and `Grid` a record describes (for writing files from the record only)."""
    from core.spatial.grid import Grid
    from core.spatial.release import Release

    art = artefact_of(record)
    info = {"label": art.label}
    if art.height is not None:
        info["height"] = art.height
    if art.leaf_scale is not None:
        info["leaf_noise_std"] = np.sqrt(2) * np.asarray(art.leaf_scale)
    rel = Release(
        method=art.method,
        leaves=np.asarray(art.leaves, dtype=np.int64).reshape(-1, 4),
        values=np.asarray(art.values, dtype=np.float64),
        epsilon={"total": record.epsilon},
        mechanisms=record.mechanisms,
        params={},
        info=info,
        unit=unit_from(art.unit_column, art.max_points if art.unit_column else None),
    )
    return rel, Grid(art.grid.rows, art.grid.cols, art.grid.bbox)


def _text(result: dict, data, prepared: LocationPrepared) -> str:
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
        feats = ", ".join(  # a feature the band does not measure is None: said so, not formatted
            f"{k} {'not measured' if v is None else format(v, '.4g')}"
            for k, v in sel["features"].items()
        )
        lines.append(f"choice: rule '{sel['rule']}' ({sel['condition']}); noisy features: {feats}")
    lines.append(f"grid {result['grid']['rows']} x {result['grid']['cols']}")
    lines.append(f"privacy unit: {prepared.unit.words()}")
    lines.append(owner_counts(data))
    if "warning" in result:
        lines.append(result["warning"])
    if "out" in result:
        meta = f" (metadata: {result['metadata']})" if "metadata" in result else ""
        lines.append(f"written to {result['out']}{meta}")
    else:
        lines.append("use --out FILE.geojson|FILE.csv or --json for the leaves")
    return "\n".join(lines)


def owner_counts(data: Prepared) -> str:
    """The data owner's line of exact counts (never part of a release)."""
    capped = f", {data.n_capped} left out by the per-person bound" if data.unit.column else ""
    return (
        f"points used {data.n_used}, dropped {data.n_dropped}{capped} (private: for you, the "
        "data owner, only)"
    )


def write_whole(path: str, text: str) -> None:
    """Write `text` to `path` completely or not at all (core.files); failures: InputError."""
    write_text(path, text)


def _parse_sizes(text: str) -> list[float]:
    try:
        sizes = [float(s) for s in text.split(",") if s.strip()]
    except ValueError:
        raise InputError(
            f"--query-sizes must be comma-separated fractions, got '{text}'."
        ) from None
    if not sizes or any(not 0 < f <= 1 for f in sizes):
        raise InputError(f"--query-sizes must be fractions in (0, 1], got '{text}'.")
    return sizes


def compare_command(args) -> dict | str:
    require_owner(current_role(), "dpx compare (evaluation against the raw points)")
    methods = parse_methods(args.methods)
    sizes = _parse_sizes(args.query_sizes)
    if args.queries < 1 or args.reps < 1:
        raise InputError("--queries and --reps must be >= 1.")
    data = _load(args)
    comp = compare(
        data.F, args.epsilon, methods, sizes, args.queries, args.reps, args.smoothing, args.seed,
        unit=data.unit,
    )  # fmt: skip
    result = {
        "grid": data.grid.describe(),
        "n_points_used": data.n_used,
        "mode": Noise.from_seed(args.seed).mode,
        **comp.to_dict(),
    }
    if data.bbox_from_data:
        result["warning"] = DEMO_BBOX_LABEL
    if args.json:
        return result
    lines = [
        f"{EVALUATION_LABEL}",
        f"{'method':<16}{'size':>6}{'MRE':>12}{'std':>10}{'build s':>9}",
    ]
    for r in comp.rows:
        std = "-" if r["mre_std"] is None else f"{r['mre_std']:.4g}"
        lines.append(
            f"{r['method']:<16}{r['query_size']:>6.2f}{r['mre']:>12.4g}{std:>10}{r['build_seconds']:>9.3f}"
        )
    return "\n".join(lines)
