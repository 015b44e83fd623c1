"""What a release leaves behind in the registry, typed: one artefact class per tool.

An artefact holds released values and public parameters only — never an exact count, a raw
value or a hash of raw bytes. It is written by the governed flow (`to_json`) and read back by
the reports, the Releases page and the CLI's analyst output (`artefact_of(record)`), so every
value a stakeholder or an analyst sees is rendered from this record.
"""

from __future__ import annotations

import math
from dataclasses import asdict
from typing import Any

from core.balancing.record import PPArtefact
from core.dpsql.record import SqlArtefact
from core.registry import Release, Tool
from core.spatial.record import LocationArtefact

MISSING = "(missing)"  # the one spelling of a missing value in pages, files and reports


def missing_or(value: Any) -> Any:
    """`value`, or `MISSING` for None, NaN and SQL NULL markers."""
    if value is None:
        return MISSING
    if isinstance(value, float) and math.isnan(value):
        return MISSING
    if isinstance(value, str) and value in ("NULL", "None", "nan", "NaN", "<NA>", "—"):
        return MISSING
    return value


Artefact = LocationArtefact | SqlArtefact | PPArtefact


def to_json(artefact: Artefact) -> dict:
    if isinstance(artefact, LocationArtefact):  # the same dict, without a deep copy per leaf
        return artefact.to_json()
    return _plain(asdict(artefact))


def _plain(obj):
    if isinstance(obj, dict):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_plain(v) for v in obj]
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if hasattr(obj, "item") and callable(obj.item):  # numpy scalars
        return _plain(obj.item())
    return obj


def artefact_of(record: Release) -> Artefact | None:
    """The typed artefact of a registry record (None when nothing was attached, or when the
    record predates typed artefacts)."""
    data = record.artefact
    if not data or data.get("tool") not in {t.value for t in Tool}:
        return None
    tool = data["tool"]
    if tool == Tool.LOCATION:
        return LocationArtefact.from_json(data)
    if tool == Tool.SQL:
        return SqlArtefact.from_json(data)
    return PPArtefact.from_json(data)
