"""Loading and validating user data; the demo-dataset registry."""

from core.data.demos import DemoDataset, all_demos, demos_of_kind, get_demo
from core.data.loading import MAX_UPLOAD_BYTES, load_table
from core.data.validation import (
    Points,
    detect_lat_lon,
    numeric_column,
    require_column,
    validate_points,
)

__all__ = [
    "MAX_UPLOAD_BYTES",
    "DemoDataset",
    "Points",
    "all_demos",
    "demos_of_kind",
    "detect_lat_lon",
    "get_demo",
    "load_table",
    "numeric_column",
    "require_column",
    "validate_points",
]
