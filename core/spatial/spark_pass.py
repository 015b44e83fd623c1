"""The location-histogram data pass on Apache Spark: points to the frequency matrix F.

For inputs larger than memory: Spark reads the file and reduces it to one count per grid cell;
only the (ny x nx) counts reach the driver, and HTF / the baselines then run on F in `core` as
today. The arithmetic is the numpy path's (`core.spatial.grid.bin_points`) operation for
operation in IEEE doubles — inside means minlon <= lon <= maxlon and minlat <= lat <= maxlat,
column floor((lon - minlon) / (maxlon - minlon) * nx) capped at nx - 1 (a point on the max edge
goes to the last cell), the same for rows — so F is identical. Nothing here is released: F is
the exact private aggregate that the DP algorithms noise. A coordinate that is missing, not a
number, not finite or outside [-90, 90] / [-180, 180] is dropped like a point outside the bbox
(`core.data.validation.usable`), never refused.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from core.errors import InputError
from core.spatial.grid import Binned, Grid
from core.spatial.pipeline import Prepared, check_inside, check_usable, grid_for


def read_points(spark, path: str | Path):
    """A Spark DataFrame of the CSV or Parquet file (CSV: header row, types inferred)."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"file not found: {path}. Check the path.")
    if path.suffix.lower() in (".parquet", ".pq"):
        return spark.read.parquet(str(path))
    return spark.read.csv(str(path), header=True, inferSchema=True)


def bin_points_spark(frame, lon: str, lat: str, grid: Grid) -> Binned:
    """F over `grid` from the columns `lon`, `lat` of a Spark DataFrame (rows with unusable
    coordinates or outside the bbox count as dropped), equal to `bin_points` on the same values."""
    from pyspark.sql import functions as fn

    x0, y0, _, y1 = grid.bbox
    x, y = _xy(lon, lat)
    valid = _usable(x, y)
    if grid.wraps:  # across the antimeridian: the grid's continuous axis (`Grid.unwrap`)
        x = fn.when(x < fn.lit(x0), x + fn.lit(360.0)).otherwise(x)
    inside = valid & (x >= x0) & (x <= grid.east) & (y >= y0) & (y <= y1)
    col = fn.least(
        fn.floor((x - fn.lit(x0)) / fn.lit(grid.width) * fn.lit(grid.nx)), fn.lit(grid.nx - 1)
    )
    row = fn.least(
        fn.floor((y - fn.lit(y0)) / fn.lit(y1 - y0) * fn.lit(grid.ny)), fn.lit(grid.ny - 1)
    )
    counts = (
        frame.where(inside.isNotNull() & inside)
        .groupBy(row.alias("r"), col.alias("c"))
        .count()
        .collect()
    )
    F = np.zeros((grid.ny, grid.nx), dtype=np.int64)
    for r, c, n in counts:
        F[int(r), int(c)] = int(n)
    total = frame.count()
    used = int(F.sum())
    return Binned(F=F, n_used=used, n_dropped=total - used)


def _xy(lon: str, lat: str):
    """The coordinate columns as doubles (a non-numeric text is NULL: Spark's lenient cast)."""
    from pyspark.sql import functions as fn

    return tuple(fn.expr(f"try_cast({_ident(c)} AS DOUBLE)") for c in (lon, lat))


def _usable(x, y):
    """`core.data.validation.usable` as a Spark condition (NULL and NaN are never usable)."""
    from pyspark.sql import functions as fn

    present = x.isNotNull() & y.isNotNull() & ~fn.isnan(x) & ~fn.isnan(y)
    return present & (y >= -90.0) & (y <= 90.0) & (x >= -180.0) & (x <= 180.0)


def _ident(name: str) -> str:
    return "`" + str(name).replace("`", "``") + "`"


def prepare_spark(
    spark,
    path: str | Path,
    lat: str,
    lon: str,
    bbox: tuple[float, float, float, float] | None,
    rows: int,
    cols: int | None = None,
    allow_data_bbox: bool = False,
    total: bool = False,
) -> Prepared:
    """`core.spatial.pipeline.prepare` with the data pass on Spark (same checks and messages
    for missing columns, too few points, identical points, no bbox; unusable coordinates are
    dropped)."""
    from pyspark.sql import functions as fn

    frame = read_points(spark, path)
    for name in (lat, lon):
        if name not in frame.columns:
            raise InputError(
                f"column '{name}' not found. Columns: {', '.join(frame.columns)}. "
                "Fix: pass --lat/--lon."
            )
    x, y = _xy(lon, lat)
    ok = _usable(x, y)

    def only(cond):
        return fn.when(cond, fn.lit(1))

    stats = frame.agg(
        fn.count(only(ok)).alias("n"),
        fn.min(fn.when(ok, x)).alias("x0"),
        fn.max(fn.when(ok, x)).alias("x1"),
        fn.min(fn.when(ok, y)).alias("y0"),
        fn.max(fn.when(ok, y)).alias("y1"),
    ).collect()[0]
    n = int(stats["n"])
    if not total:
        check_usable(n)
    extent = None if n == 0 else (stats["x0"], stats["x1"], stats["y0"], stats["y1"])
    grid, from_data = grid_for(extent, bbox, rows, cols, allow_data_bbox, total)
    binned = bin_points_spark(frame, lon, lat, grid)
    if not total:
        check_inside(binned.n_used, 0, binned.n_dropped, grid)
    return Prepared(
        F=binned.F,
        grid=grid,
        n_used=binned.n_used,
        n_dropped=binned.n_dropped,
        bbox_from_data=from_data,
        lat_col=lat,
        lon_col=lon,
    )
