"""The demo-dataset registry shared by the pages and `dpx datasets`.

Each capability lists its demos in a `DEMOS` sequence in its own `demos` module
(named in `DEMO_MODULES`); this module gathers them.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from core.errors import InputError

DEMO_DATA_DIR = Path(__file__).resolve().parents[2] / "demo_data"

DEMO_MODULES = ("core.spatial.demos", "core.balancing.demos", "core.dpsql.demos")


@dataclass(frozen=True)
class DemoDataset:
    """A named dataset the app can load without an upload."""

    name: str
    kind: str  # "points" (lat/lon), "table" (PP), "sql" (several tables)
    description: str
    licence: str
    source: str
    loader: Callable[[], pd.DataFrame | dict[str, pd.DataFrame]]

    def load(self) -> pd.DataFrame | dict[str, pd.DataFrame]:
        return self.loader()

    def describe(self) -> dict:
        return {
            "name": self.name,
            "kind": self.kind,
            "description": self.description,
            "licence": self.licence,
            "source": self.source,
        }


def all_demos() -> list[DemoDataset]:
    demos: list[DemoDataset] = []
    for module in DEMO_MODULES:
        if importlib.util.find_spec(module) is not None:
            demos.extend(importlib.import_module(module).DEMOS)
    return demos


def demos_of_kind(kind: str) -> list[DemoDataset]:
    return [d for d in all_demos() if d.kind == kind]


def get_demo(name: str) -> DemoDataset:
    for demo in all_demos():
        if demo.name == name:
            return demo
    names = ", ".join(d.name for d in all_demos()) or "none yet"
    raise InputError(f"unknown demo dataset '{name}'. Available: {names} (see 'dpx datasets').")
