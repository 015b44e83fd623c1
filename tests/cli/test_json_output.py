"""`--json` output: indented while small enough to read, one line (the C encoder) when large;
the same JSON value either way, and never NaN."""

from __future__ import annotations

import json

import pytest

from core.cli import PRETTY_JSON_MAX_CHARS, emit


def test_small_results_are_indented_and_large_ones_compact(capsys):
    small = {"leaves": [{"row0": 0, "noisy_count": 1.5}]}
    emit(small, as_json=True)
    out = capsys.readouterr().out
    assert "\n  " in out and json.loads(out) == small
    large = {"leaves": [{"row0": i, "noisy_count": i + 0.5} for i in range(PRETTY_JSON_MAX_CHARS)]}
    emit(large, as_json=True)
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and json.loads(out) == large


def test_nan_is_refused_whatever_the_size():
    with pytest.raises(ValueError):
        emit({"x": float("nan")}, as_json=True)
