"""Points binned where they lie: DuckDB reads the CSV/Parquet file and counts the points per
grid cell, so the table is never materialised in Python (issue 22, Build 1).

`scan_prepare(path, ...)` returns the same `Prepared` (the same F, the same owner counts) as
`core.spatial.pipeline.prepare` on the table `core.spatial.io.read_points_table` loads, with the
same one-line errors. A coordinate that is missing, not a number, not finite or outside
[-90, 90] / [-180, 180] is dropped like a point outside the bbox (`core.data.validation.usable`),
never refused. Memory: with the point unit only the counts per occupied cell come
back; with a person unit the person id and cell of every point inside the bbox come back
(the per-person bound needs each person's points, `core.spatial.persons`), never the table.

Privacy: nothing here releases anything. It runs inside the governed computation, after the
charge. No single value is ever refused (issue 27). The data owner's run still refuses, with
exact counts, a file with too few usable points or none inside the bbox (the owner may see
them); an analyst's run (`total=True`) refuses nothing on the data, so neighbouring files
have the same outcome. The schema (column names and types) is a public fact the owner
registered.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from core.data.declared import ColumnType, TableSchema
from core.data.loading import refuse_non_text
from core.data.relation import guard_connection, relation_sql
from core.data.validation import detect_lat_lon
from core.errors import InputError
from core.privacy import Noise
from core.spatial.grid import Grid
from core.spatial.persons import bound_points_per_person
from core.spatial.pipeline import Prepared, check_inside, check_usable, grid_for
from core.spatial.unit import POINT, PersonUnit, Unit

# the texts pandas' CSV reader takes for a missing value (read as NULL here too)
NULL_TEXTS = str(
    ["", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN",
     "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null"]
)  # fmt: skip
MEMORY_LIMIT = "1GB"  # DuckDB spills beyond this; the CLI's peak stays near it at any file size


class ScanUnavailable(Exception):
    """DuckDB cannot read this file as a table (unusual delimiter, encoding, ...): the caller
    falls back to the careful pandas reader, which explains what is wrong."""


@dataclass(frozen=True)
class _Source:
    """A DuckDB relation over the file and the columns the release uses."""

    con: object
    relation: str  # a SQL table expression reading the file
    lat: str
    lon: str
    uid: str | None
    text: tuple[str, ...] = ()  # the coordinate columns read as text (VARCHAR)


def scan_prepare(
    path: str | Path,
    lat: str | None = None,
    lon: str | None = None,
    bbox: tuple[float, float, float, float] | None = None,
    rows: int = 1024,
    cols: int | None = None,
    allow_data_bbox: bool = False,
    unit: Unit = POINT,
    noise: Noise | None = None,
    total: bool = False,
    schema: TableSchema | None = None,
) -> Prepared:
    """Validate and bin the points of the file at `path` in DuckDB (see the module docstring);
    `total` as in `core.spatial.pipeline.prepare` (an analyst's run: no refusal on the data).

    `schema`: the registered table's declared schema. The file is then read as it declares
    (`core.data.relation.relation_sql`: every column converted by one total rule, so no value
    and no type the file happens to hold changes the read) and the columns are the declared
    ones; there is no fallback to another reader.

    Raises `ScanUnavailable` when DuckDB cannot read an undeclared file at all; `InputError`
    (one line) for every bad input the in-memory path refuses."""
    if schema is not None:
        src = _open_declared(Path(path), schema, lat, lon, unit.column)
    else:
        src = _open(Path(path), lat, lon, unit.column)
    try:
        return _prepare(src, bbox, rows, cols, allow_data_bbox, unit, noise, total)
    finally:
        src.con.close()


def _open(path: Path, lat: str | None, lon: str | None, uid: str | None) -> _Source:
    import duckdb

    if not path.is_file():
        raise InputError(f"file not found: {path}. Check the path.")
    refuse_non_text(path)  # UTF-16 or binary: one line saying so, before DuckDB guesses
    with path.open("rb") as fh:
        magic = fh.read(4)
    is_parquet = path.suffix.lower() in (".parquet", ".pq") or magic == b"PAR1"
    con = duckdb.connect(config={"memory_limit": MEMORY_LIMIT})
    literal = "'" + str(path).replace("'", "''") + "'"
    try:
        if is_parquet:
            relation = f"read_parquet({literal})"
        else:
            relation = f"read_csv({literal}, header = true, nullstr = {NULL_TEXTS})"
        described = con.execute(f"DESCRIBE SELECT * FROM {relation}").fetchall()
        columns = [d[0] for d in described]
    except duckdb.Error as err:
        con.close()
        raise ScanUnavailable(str(err)) from None
    try:
        lat_c, lon_c = detect_lat_lon(pd.DataFrame(columns=columns), lat, lon)
        if uid is not None and uid not in columns:
            raise InputError(
                f"person column '{uid}' is not in the table (columns: {', '.join(columns[:12])}). "
                "Pass the column that says whose point it is with --uid."
            )
    except InputError:
        con.close()
        raise
    if not is_parquet:
        # ids read as text, as pandas does (same spelling); coordinates as text, converted by
        # TRY_CAST: a value the sniffer's sample did not foresee ('abc' on line 80,000) is then
        # a missing value, never a failed read
        text = [c for c in dict.fromkeys([lat_c, lon_c, uid]) if c is not None]
        types = ", ".join(f"{_quote_text(c)}: 'VARCHAR'" for c in text)
        relation = relation[:-1] + f", types = {{{types}}})"
        text = (lat_c, lon_c)
    else:
        text = tuple(d[0] for d in described if d[0] in (lat_c, lon_c) and d[1] == "VARCHAR")
    return _Source(con, relation, lat_c, lon_c, uid, text)


def _open_declared(
    path: Path, schema: TableSchema, lat: str | None, lon: str | None, uid: str | None
) -> _Source:
    """The file read into its declared schema; coordinates declared as text are converted like
    an undeclared CSV's (TRY_CAST after trim), numbers by TRY_CAST."""
    import duckdb

    if not path.is_file():
        raise InputError(f"file not found: {path}. Check the path.")
    columns = schema.names
    lat_c, lon_c = detect_lat_lon(pd.DataFrame(columns=list(columns)), lat, lon)
    if uid is not None and uid not in columns:
        raise InputError(
            f"person column '{uid}' is not in the declared schema (columns: "
            f"{', '.join(columns[:12])}). Pass the dataset's person column."
        )
    con = duckdb.connect(config={"memory_limit": MEMORY_LIMIT})
    guard_connection(con)  # the declared read stays total (core.data.relation)
    text = tuple(c for c in (lat_c, lon_c) if schema.column(c).type is ColumnType.TEXT)
    return _Source(con, f"({relation_sql(path, schema)})", lat_c, lon_c, uid, text)


def _quote_text(text: str) -> str:
    return "'" + str(text).replace("'", "''") + "'"


def _ident(name: str) -> str:
    return '"' + str(name).replace('"', '""') + '"'


def _prepare(src: _Source, bbox, rows, cols, allow_data_bbox, unit, noise, total) -> Prepared:
    import duckdb

    try:
        stats = _coordinate_stats(src)
    except duckdb.Error as err:  # e.g. a CSV whose typing failed late: the careful reader
        raise ScanUnavailable(str(err)) from None
    n_ok = stats["n"] - stats["n_unusable"]
    if not total:
        check_usable(n_ok)
    extent = None if n_ok == 0 else (stats["min_x"], stats["max_x"], stats["min_y"], stats["max_y"])
    grid, from_data = grid_for(extent, bbox, rows, cols, allow_data_bbox, total)
    if isinstance(unit, PersonUnit):
        F, n_used, n_inside = _bin_persons(src, grid, unit, noise)
        n_capped = n_inside - n_used
    else:
        F, n_used = _bin_points(src, grid)
        n_inside, n_capped = n_used, 0
    n_outside = n_ok - n_inside
    if not total:
        check_inside(n_used, n_capped, n_outside, grid)
    return Prepared(
        F=F,
        grid=grid,
        n_used=n_used,
        n_dropped=n_outside + stats["n_unusable"],
        bbox_from_data=from_data,
        lat_col=src.lat,
        lon_col=src.lon,
        unit=unit,
        n_capped=n_capped,
    )


def _points_sql(src: _Source) -> str:
    """Every row, its coordinates as DOUBLE (a missing or non-numeric value is NULL)."""
    uid = f", {_ident(src.uid)} AS uid" if src.uid is not None else ""
    return (
        f"SELECT {_number(src, src.lon)} AS x, {_number(src, src.lat)} AS y{uid} "
        f"FROM {src.relation}"
    )


def _number(src: _Source, column: str) -> str:
    """The column as DOUBLE, NULL where it holds no number. A text column is trimmed first:
    DuckDB would push a bare TRY_CAST into the CSV reader as a strict cast (DuckDB 2.0)."""
    if column in src.text:
        return f"TRY_CAST(trim({_ident(column)}) AS DOUBLE)"
    return f"TRY_CAST({_ident(column)} AS DOUBLE)"


# `core.data.validation.usable` in SQL: both coordinates present, finite, in their domain
_HAS_XY = (
    "x IS NOT NULL AND y IS NOT NULL AND NOT isnan(x) AND NOT isnan(y) "
    "AND y >= -90 AND y <= 90 AND x >= -180 AND x <= 180"
)


def _coordinate_stats(src: _Source) -> dict:
    """Row count, rows without two usable coordinates and the extent of the others, one scan."""
    ok = _HAS_XY
    row = src.con.execute(
        f"""SELECT count(*), count(*) FILTER (WHERE NOT ({ok})),
                   min(x) FILTER (WHERE {ok}), max(x) FILTER (WHERE {ok}),
                   min(y) FILTER (WHERE {ok}), max(y) FILTER (WHERE {ok})
            FROM ({_points_sql(src)})"""
    ).fetchone()
    keys = ("n", "n_unusable", "min_x", "max_x", "min_y", "max_y")
    return dict(zip(keys, row, strict=True))


def _cell_sql(grid: Grid) -> tuple[str, str]:
    """(inside condition, cell index) over columns x, y: the same floating-point operations, in
    the same order, as `core.spatial.grid.contains` and `cells_of`, so every point lands in the
    same cell as in numpy."""
    x0, y0, _, y1 = (repr(float(v)) for v in grid.bbox)
    u = f"(CASE WHEN x < {x0} THEN x + 360.0 ELSE x END)" if grid.wraps else "x"
    east, width = repr(float(grid.east)), repr(float(grid.width))
    height = repr(float(grid.bbox[3] - grid.bbox[1]))
    inside = f"({u} >= {x0} AND {u} <= {east} AND y >= {y0} AND y <= {y1})"
    col = f"least(greatest(CAST(floor(({u} - {x0}) / {width} * {float(grid.nx)!r}) AS BIGINT), 0), {grid.nx - 1})"
    row = f"least(greatest(CAST(floor((y - {y0}) / {height} * {float(grid.ny)!r}) AS BIGINT), 0), {grid.ny - 1})"
    return inside, f"({row} * {grid.nx} + {col})"


def _bin_points(src: _Source, grid: Grid) -> tuple[np.ndarray, int]:
    """F and the number of points inside the bbox (one GROUP BY over the occupied cells)."""
    inside, cell = _cell_sql(grid)
    cells, counts = _fetch_pair(
        src.con,
        f"SELECT {cell} AS cell, count(*) AS n FROM ({_points_sql(src)}) "
        f"WHERE {_HAS_XY} AND {inside} GROUP BY cell",
    )
    F = np.zeros(grid.ny * grid.nx, dtype=np.int64)
    F[cells] = counts
    return F.reshape(grid.ny, grid.nx), int(counts.sum())


def _bin_persons(src: _Source, grid: Grid, unit: PersonUnit, noise: Noise | None):
    """F after the per-person bound, the points used and the points inside the bbox. The person
    id and cell of each point inside come back in table order (the bound's seeded keys depend on
    a point's position among its person's points, as in the in-memory path)."""
    if noise is None:
        raise ValueError("bounding points per person needs a noise source (secure or seeded)")
    inside, cell = _cell_sql(grid)
    frame = src.con.execute(
        f"SELECT uid, {cell} AS cell FROM ({_points_sql(src)}) WHERE {_HAS_XY} AND {inside}"
    ).df()
    cells = frame["cell"].to_numpy(dtype=np.int64)
    keep = bound_points_per_person(frame["uid"], unit.k, noise)
    F = np.bincount(cells[keep], minlength=grid.ny * grid.nx).astype(np.int64)
    return F.reshape(grid.ny, grid.nx), int(keep.sum()), int(len(cells))


def _fetch_pair(con, sql: str) -> tuple[np.ndarray, np.ndarray]:
    out = con.execute(sql).fetchnumpy()
    return np.asarray(out["cell"], dtype=np.int64), np.asarray(out["n"], dtype=np.int64)
