"""For a page's typed request (issue 28): one variant per field, so a test can check that a
change in any field changes the fingerprint — and a field added later cannot be forgotten (the
variants are built by iterating over the dataclass's fields, nested ones included)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from fractions import Fraction


def changed(value):
    """Another value of the same type (no field is left as it was)."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, Fraction):
        return value / 2
    if isinstance(value, int | float):
        return value * 2 + 1
    if isinstance(value, str):
        return value + "-other"
    if isinstance(value, tuple):
        return (*value, "other") if value and isinstance(value[0], str) else ("other",)
    raise AssertionError(f"no automatic change for {value!r}: give one in `given`")


def variants(obj, given: Mapping[str, Sequence] | None = None, prefix: str = "") -> dict:
    """`{"field" or "outer.inner": [obj with that field changed, ...]}` over every field of the
    frozen dataclass `obj`, recursing into nested dataclasses; `given` names explicit values
    (by the same dotted names) where no automatic change fits (None, a validated shape)."""
    given = dict(given or {})
    out: dict[str, list] = {}
    for f in dataclasses.fields(obj):
        name, value = prefix + f.name, getattr(obj, f.name)
        if name in given:
            out[name] = [dataclasses.replace(obj, **{f.name: v}) for v in given[name]]
        elif dataclasses.is_dataclass(value):
            for inner, vs in variants(value, given, name + ".").items():
                out[inner] = [dataclasses.replace(obj, **{f.name: v}) for v in vs]
        else:
            out[name] = [dataclasses.replace(obj, **{f.name: changed(value)})]
    return out


def check_fingerprints(obj, given: Mapping[str, Sequence] | None = None) -> int:
    """Every variant differs from `obj` and has its own fingerprint (all distinct); returns how
    many variants were checked."""
    seen = {obj.fingerprint()}
    count = 0
    for name, vs in variants(obj, given).items():
        assert vs, name
        for v in vs:
            assert v != obj, name
            assert v.fingerprint() != obj.fingerprint(), f"{name}: {v}"
            seen.add(v.fingerprint())
            count += 1
    assert len(seen) == 1 + count
    return count
