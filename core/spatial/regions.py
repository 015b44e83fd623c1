"""Named public regions for the bounding box of a location histogram.

The bbox is a public parameter (htf.md §1.2): it must never come from the private points. These
presets are public extents (rounded administrative/geographic extents, MINLON, MINLAT, MAXLON,
MAXLAT in WGS84 degrees) that a data owner can pick instead of typing four numbers.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.errors import InputError
from core.spatial.synthetic import SYNTHETIC_BBOX

BBox = tuple[float, float, float, float]
# A box across the antimeridian wider than this is almost surely MINLON and MAXLON swapped
# (e.g. -118,34,-119,35 would be 359° wide): refused with that hint.
MAX_WRAP_WIDTH = 180.0


@dataclass(frozen=True)
class Region:
    name: str
    label: str
    bbox: BBox


REGIONS: tuple[Region, ...] = (
    Region("world", "World", (-180.0, -90.0, 180.0, 90.0)),
    Region("continental-us", "Continental United States", (-125.0, 24.0, -66.5, 49.5)),
    Region("europe", "Europe", (-25.0, 34.0, 45.0, 72.0)),
    Region("los-angeles", "Los Angeles (70 × 70 km, the HTF paper's area)", SYNTHETIC_BBOX),
    Region("new-york", "New York City", (-74.26, 40.49, -73.70, 40.92)),
    Region("chicago", "Chicago", (-87.94, 41.64, -87.52, 42.03)),
    Region("san-francisco", "San Francisco", (-122.52, 37.70, -122.35, 37.83)),
    Region("london", "Greater London", (-0.51, 51.28, 0.34, 51.70)),
    Region("paris", "Paris (inner suburbs)", (2.20, 48.75, 2.50, 48.95)),
    # across the antimeridian: MINLON > MAXLON
    Region("fiji", "Fiji (across the antimeridian)", (176.8, -19.3, -178.2, -15.6)),
)
REGION_BY_NAME = {r.name: r for r in REGIONS}


def region_bbox(name: str) -> BBox:
    """The bbox of a named region; InputError listing the names for an unknown one."""
    region = REGION_BY_NAME.get(name.strip().lower())
    if region is None:
        raise InputError(
            f"unknown region '{name}'. Choose from: {', '.join(REGION_BY_NAME)} "
            "(or give --bbox MINLON,MINLAT,MAXLON,MAXLAT)."
        )
    return region.bbox


def check_bbox(bbox: BBox) -> BBox:
    """A bbox inside [-180, 180] × [-90, 90] with MINLAT < MAXLAT and MINLON != MAXLON, else
    InputError. MINLON > MAXLON is a box across the antimeridian (east from MINLON over 180°)."""
    x0, y0, x1, y1 = (float(v) for v in bbox)
    if not (-180 <= x0 <= 180 and -180 <= x1 <= 180 and x0 != x1 and -90 <= y0 < y1 <= 90):
        raise InputError(
            f"bounding box {[x0, y0, x1, y1]} is not valid: need MINLAT < MAXLAT within "
            "[-90, 90] and two different longitudes within [-180, 180] (MINLON < MAXLON, or "
            "MINLON > MAXLON for a box across the antimeridian, e.g. 176.8,-19.3,-178.2,-15.6)."
        )
    if x0 > x1 and x1 + 360 - x0 > MAX_WRAP_WIDTH:
        raise InputError(
            f"bounding box {[x0, y0, x1, y1]} is not valid: MINLON > MAXLON means a box across "
            f"the antimeridian, and this one would span {x1 + 360 - x0:g}° of longitude. Were "
            "MINLON and MAXLON swapped? Give MINLON,MINLAT,MAXLON,MAXLAT."
        )
    return (x0, y0, x1, y1)
