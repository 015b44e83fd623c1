"""Binning for an analyst: total on the data, so whether it fails depends on public input only.

`core.spatial.pipeline.prepare` is the data owner's path: it refuses, with exact counts in the
message, a table whose points are too few, identical or all outside the bbox — useful to the
owner, but each of those messages (and the fact that it fails at all) depends on the private
rows. An analyst sees only releases and public parameters, so `prepare_total` never looks at
values to decide whether to go on: it fails only on the schema (a missing column) or on the
public parameters (bbox, grid), drops rows whose coordinates are missing, non-numeric, outside
[-90, 90] / [-180, 180] or outside the bbox without saying how many, and always returns a
frequency matrix (possibly all zeros: a DP histogram of an empty region is still a valid
release).
"""

from __future__ import annotations

import pandas as pd

from core.data.validation import coordinate_values, usable
from core.errors import InputError
from core.privacy import Noise
from core.spatial.grid import Grid
from core.spatial.persons import bin_units, person_ids
from core.spatial.pipeline import Prepared
from core.spatial.regions import check_bbox
from core.spatial.unit import POINT, Unit


def prepare_total(
    df: pd.DataFrame,
    lat: str,
    lon: str,
    bbox: tuple[float, float, float, float],
    rows: int,
    unit: Unit = POINT,
    noise: Noise | None = None,
) -> Prepared:
    """F over a `rows`×`rows` grid of the public `bbox`; no data-dependent refusal or message.

    Fails (InputError) only when `lat`/`lon` (or the person column of a `PersonUnit`) are not
    columns of the table, are the same column, or when the bbox / grid are invalid — all
    public. The counts of used and dropped rows are in the result for the owner; an analyst's
    page must not show them. A person unit bounds each person to `unit.k` points (`noise`)."""
    columns = [str(c) for c in df.columns]
    for role, name in (("latitude", lat), ("longitude", lon)):
        if name not in columns:
            raise InputError(f"{role} column '{name}' is not in the table. Choose another column.")
    if lat == lon:
        raise InputError("latitude and longitude must be two different columns.")
    grid = Grid(int(rows), int(rows), tuple(float(v) for v in check_bbox(tuple(bbox))))
    y, x = coordinate_values(df, lat), coordinate_values(df, lon)
    ok = usable(x, y)  # outside [-90, 90] / [-180, 180]: dropped (a wrapped bbox could take it)
    uid = None
    if unit.column is not None:
        uid = person_ids(df, unit.column)[ok].reset_index(drop=True)
    binned, n_capped = bin_units(x[ok], y[ok], uid, grid, unit, noise)
    return Prepared(
        F=binned.F,
        grid=grid,
        n_used=binned.n_used,
        n_dropped=binned.n_dropped + int((~ok).sum()),
        bbox_from_data=False,
        lat_col=lat,
        lon_col=lon,
        unit=unit,
        n_capped=n_capped,
    )
