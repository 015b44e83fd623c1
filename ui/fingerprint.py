"""A page request's fingerprint (issue 28): a stable text of every field of a frozen dataclass,
nested ones included — equal requests give equal texts, a change in any field another one. What
marks a kept result stale on every page."""

from __future__ import annotations

import json
from dataclasses import asdict


def fingerprint(request) -> str:
    return json.dumps(asdict(request), sort_keys=True, default=str)
