"""The location record's JSON: built directly, it equals the generic dataclass conversion."""

from __future__ import annotations

import math
from dataclasses import asdict

from core.governance.artefacts import _plain, to_json
from core.spatial.record import GridSpec, LocationArtefact, MethodChoice


def _artefact(**kw) -> LocationArtefact:
    base = {
        "method": "dawa",
        "label": "DAWA",
        "unit": "one point",
        "grid": GridSpec((-118.6, 33.7, -117.9, 34.4), 8, 4),
        "leaves": ((0, 4, 0, 4), (4, 8, 0, 2), (4, 8, 2, 4)),
        "values": (12.5, -3.25, 7.0),
    }
    return LocationArtefact(**{**base, **kw})


def test_direct_json_equals_generic_conversion():
    cases = [
        _artefact(),
        _artefact(values=(math.nan, math.inf, 1.0), leaf_scale=(1.0, -math.inf, 2.0)),
        _artefact(
            choice=MethodChoice("dawa", ("rule 'dense': n > 1000",)),
            height=3,
            unit_column="uid",
            max_points=4,
        ),
    ]
    for art in cases:
        direct = to_json(art)
        assert direct == _plain(asdict(art))
        assert list(direct) == list(_plain(asdict(art)))  # the same key order in the record
    assert to_json(cases[1])["values"] == [None, None, 1.0]
    assert LocationArtefact.from_json(to_json(cases[2])) == cases[2]
