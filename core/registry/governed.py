"""Shared steps of a governed run (see `core.registry.cli_hooks`): resolve the dataset, refuse
early, record, compute after the charge, and describe the registry's state to the user."""

from __future__ import annotations

import sys
from collections.abc import Callable
from enum import StrEnum

from core.errors import InputError
from core.registry.models import Dataset, Release, RunKind
from core.registry.registry import Registry

Handler = Callable[[object], "dict | str"]

_NOT_PARAMS = {"handler", "json", "registry", "command"}


class Tool(StrEnum):
    HTF = "htf"
    SQL = "sql"
    PP = "pp"


def noise_mode(args) -> str:
    return "seeded" if getattr(args, "seed", None) is not None else "secure"


def params_of(args) -> dict:
    return {k: v for k, v in sorted(vars(args).items()) if k not in _NOT_PARAMS}


def open_registry(args, registered: bool) -> Registry | None:
    """The registry; for an unregistered run a registry that cannot be opened only warns."""
    try:
        return Registry(args.registry)
    except InputError as err:
        if registered:
            raise
        print(f"dpx: warning: this run is not recorded: {err}", file=sys.stderr)
        return None


def resolve_dataset(registry: Registry, tool: Tool, args) -> Dataset:
    """The registered dataset of `--dataset`, its files verified; refusals are recorded."""
    d = registry.dataset(args.dataset)
    try:
        registry.verify_files(d)
        if noise_mode(args) == "seeded" and not d.teaching:
            raise InputError(
                f"seeded (demo) noise is refused on registered dataset '{d.name}': it is not "
                "flagged --teaching. Fix: drop --seed (secure noise)."
            )
    except InputError as err:
        registry.refuse(tool.value, d.name, str(err), params_of(args))
        raise
    return d


def refused_if_bad(registry: Registry, tool: Tool, args, check: Callable[[], None]) -> None:
    try:
        check()
    except InputError as err:
        registry.refuse(tool.value, args.dataset, str(err), params_of(args))
        raise


def single_table(d: Dataset, tool: Tool) -> str:
    private = d.private_tables
    if len(private) != 1:
        raise InputError(
            f"dpx {tool.value} reads one table, but dataset '{d.name}' has "
            f"{len(private)} private tables. Fix: register the table as its own dataset."
        )
    return private[0].path


def registry_info(registry: Registry, release: Release) -> dict:
    info = {
        "release_id": release.id,
        "kind": release.kind.value,
        "dataset": release.dataset,
        "epsilon_charged": release.epsilon if release.kind is RunKind.RELEASE else 0.0,
        "delta_charged": release.delta if release.kind is RunKind.RELEASE else 0.0,
        "registry": str(registry.directory),
    }
    if release.dataset is not None:
        eps_left, delta_left = registry.remaining(release.dataset)
        info["epsilon_remaining"] = eps_left
        info["delta_remaining"] = delta_left
    return info


def remaining_text(registry: Registry, dataset: Dataset) -> str:
    eps_left, delta_left = registry.remaining(dataset.name)
    p = dataset.policy
    return (
        f"Dataset '{dataset.name}': remaining epsilon {eps_left:g} of {p.epsilon_total:g}, "
        f"delta {delta_left:g} of {p.delta_total:g}."
    )


def registry_line(info: dict) -> str:
    if info["kind"] == RunKind.RELEASE.value:
        return (
            f"release #{info['release_id']} of dataset '{info['dataset']}': charged epsilon "
            f"{info['epsilon_charged']:g}, delta {info['delta_charged']:g}; remaining epsilon "
            f"{info['epsilon_remaining']:g}, delta {info['delta_remaining']:g}"
        )
    if info["kind"] == RunKind.DEMO.value:
        return f"demo run #{info['release_id']} (seeded: not a release, nothing charged)"
    return f"unregistered run #{info['release_id']} (recorded; not limited across runs)"


def compute_after_charge(
    registry: Registry | None, release: Release | None, compute: Callable[[], dict]
):
    """Run `compute` after the charge; on failure mark the run failed and keep the charge."""
    try:
        return compute()
    except BaseException as err:
        if registry is None or release is None:
            raise
        message = str(err) if isinstance(err, InputError) else type(err).__name__
        registry.fail(release.id, message)
        charged = release.epsilon > 0 or release.delta > 0
        if release.kind is RunKind.RELEASE and charged and isinstance(err, InputError):
            raise InputError(
                f"{err} (release #{release.id}: the charge of epsilon {release.epsilon:g} "
                "stands, the computation had started.)"
            ) from None
        raise


def header_of(path: str) -> list[str] | None:
    """The column names of a CSV/Parquet file (schema only, no values), or None if unsure."""
    try:
        if path.lower().endswith((".parquet", ".pq")):
            import pyarrow.parquet as pq

            return list(pq.read_schema(path).names)
        import pandas as pd

        return [str(c) for c in pd.read_csv(path, nrows=0, sep=None, engine="python").columns]
    except Exception:  # noqa: BLE001 - the tool's own reader explains unusual files later
        return None


def check_columns(path: str, wanted: dict[str, str | None]) -> None:
    """Refuse, before charging, a named column that the file's header does not have."""
    columns = header_of(path)
    if columns is None:
        return
    for role, name in wanted.items():
        if name is not None and name not in columns:
            raise InputError(
                f"{role} column '{name}' is not in the table (columns: {', '.join(columns)}). "
                "Nothing was charged."
            )


def as_json(handler: Handler, args) -> dict:
    """Run `handler` asking for its JSON object (the artefact), restoring the user's choice."""
    wants_json, args.json = args.json, True
    try:
        return handler(args)
    finally:
        args.json = wants_json


def keeps_own_output(release: Release | None, args) -> bool:
    """Unregistered and demo runs in text mode print exactly what the tool prints today."""
    return release is None or (release.kind is not RunKind.RELEASE and not args.json)


def run_unchanged(registry: Registry | None, release: Release | None, handler: Handler, args):
    result = compute_after_charge(registry, release, lambda: handler(args))
    if registry is not None and release is not None:
        registry.attach(release.id, result if isinstance(result, dict) else {"text": result})
    return result
