"""The release registry: datasets with persistent (ε, δ) budgets, releases, refusals.

One embedded SQLite database file (`registry.sqlite` in the registry directory: `--registry
DIR`, else `$DPX_REGISTRY`, else `~/.dpx`). Budgets belong to datasets, not to processes or
browser sessions: every charge is one `BEGIN IMMEDIATE` transaction that re-reads what was
spent, checks the dataset's total and per-query caps and writes the charge, so concurrent
processes can never overspend. Composition is basic: a dataset's spend is the plain sum of the
ε (and of the δ) of its releases.
"""

from core.registry.models import (
    BudgetChange,
    ChangeKind,
    Claim,
    Dataset,
    Mechanism,
    Policy,
    Refusal,
    Release,
    RunKind,
    SavedPlan,
    SchemaChange,
    Status,
    TableFile,
    Tool,
)
from core.registry.registry import Registry, default_directory

__all__ = [
    "BudgetChange",
    "ChangeKind",
    "Claim",
    "Dataset",
    "Mechanism",
    "Policy",
    "Refusal",
    "Registry",
    "Release",
    "RunKind",
    "SavedPlan",
    "SchemaChange",
    "Status",
    "TableFile",
    "Tool",
    "default_directory",
]
