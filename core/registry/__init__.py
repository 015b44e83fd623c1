"""The release registry: datasets with persistent (ε, δ) budgets, releases, refusals.

One embedded SQLite database file (`registry.sqlite` in the registry directory: `--registry
DIR`, else `$DPX_REGISTRY`, else `~/.dpx`). Budgets belong to datasets, not to processes or
browser sessions: every charge is one `BEGIN IMMEDIATE` transaction that re-reads what was
spent, checks the dataset's total and per-query caps and writes the charge, so concurrent
processes can never overspend. Composition is basic: a dataset's spend is the plain sum of the
ε (and of the δ) of its releases.

Each table file carries its declared public facts (`Dataset.schemas`, a `TableSchema` per table
name; `Dataset.schema(table)`; edits through `Registry.set_schema`, history in
`Registry.schema_history`). A dataset's budget history (`Registry.budget_history`) lists total
changes and restores (`ChangeKind.RESTORE`, with the backup's SHA-256 and the spend before and
after).
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
