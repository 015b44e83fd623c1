"""What every governed `dpx` command shares: the role, the registry and dataset it works on,
its noise source, and how a recorded release is printed.

    target = resolve(args, Tool.SQL, files=("table", "public"))
    prepared = prepare(params_from(args), ...)              # the tool's service
    request = sql_request(prepared, role=target.role, ...)  # core/governance: one per tool
    governed = govern(target.registry, request, compute, artefact_of)
    return owner_output(...) if target.role is Role.OWNER else release_view(target, governed)

The analyst role (`DPX_MODE=analyst`, unknown values fail closed to it) works on registered
datasets only, with secure noise, and everything it prints is rendered from the release record
(`release_view`): the mechanisms that drew, the released values, the charge and the remaining
budget — never an exact count, a raw value or a hash of raw bytes.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

from core import cliargs
from core.errors import InputError
from core.numbers import shown  # every budget number a person reads is rounded by it, once

if TYPE_CHECKING:  # imported where used: `dpx ... --help` stays light (no numpy, pandas)
    from core.data.declared import TableSchema
    from core.governance import Role
    from core.privacy import Noise
    from core.registry import Dataset, Registry, Release

_NOT_PARAMS = {
    "handler",
    "json",
    "registry",
    "command",
    "action",
    "spill_dir",
}  # spill: a local path
# Arguments naming data files: on a registered dataset they are the owner's paths (the dataset
# names its files and the registry keeps their hashes), so they are not recorded as parameters
# that a report or an analyst would read.
_FILE_PARAMS = {"input", "freqs", "table", "public", "tables"}


def add_dataset_argument(p, optional: tuple[str, ...] = ()) -> None:
    """`--dataset NAME`: work on a registered dataset (its files are read, its budget charged).

    `optional` names arguments (the INPUT positional, `--uid`) that become optional because
    `--dataset` supplies them; the command checks that one of the two was given."""
    for action in p._actions:
        if action.dest in optional:
            action.required = False
            if not action.option_strings:  # a positional: make it "zero or one"
                action.nargs = "?"
                action.default = None
    p.add_argument(
        "--dataset",
        type=cliargs.NAME,
        metavar="NAME",
        default=None,
        help="a registered dataset (see `dpx dataset`): its files are read and its budget charged",
    )


@dataclass(frozen=True)
class Target:
    """Who runs the command, on which registered dataset (None: files given directly by the
    owner), with which registry (None: an owner's unregistered run whose registry could not be
    opened — the run then goes unrecorded, with a warning) and which noise."""

    role: Role
    registry: Registry | None
    dataset: Dataset | None
    noise: Noise


def params_of(args) -> dict:
    """The public parameters of the invocation, as recorded with the release (on a registered
    dataset without the owner's file paths)."""
    hidden = _NOT_PARAMS | (_FILE_PARAMS if getattr(args, "dataset", None) else set())
    return {k: v for k, v in sorted(vars(args).items()) if k not in hidden}


def resolve(args, tool: str, files: tuple[str, ...]) -> Target:
    """Role checks, then the registry and dataset. `files` names the arguments that give data
    files directly (an analyst may not; with `--dataset` they are refused as ambiguous).

    A registered dataset's files are verified unchanged (a refusal is recorded)."""
    from core.governance import Role, RoleError, current_role
    from core.privacy import Noise
    from core.registry import Registry

    role = current_role()
    given = [name for name in files if getattr(args, name, None)]
    if role is Role.ANALYST:
        if args.seed is not None:
            raise RoleError("analyst mode uses secure noise only. Fix: drop --seed.")
        if given:
            flag = "INPUT" if given[0] == "input" else "--" + given[0].replace("_", "-")
            raise RoleError(
                f"analyst mode works on registered datasets only ({flag} gives files "
                "directly). Fix: use --dataset NAME instead."
            )
        if args.dataset is None:
            raise RoleError(
                "analyst mode works on registered datasets only. Fix: add --dataset NAME."
            )
    noise = Noise.from_seed(args.seed)
    if args.dataset is None:
        return Target(role, _optional_registry(args), None, noise)
    if given:
        raise InputError("give files directly or --dataset NAME, not both.")
    registry = Registry(args.registry)
    dataset = registry.dataset(args.dataset)
    try:
        registry.verify_files(dataset)
    except InputError as err:
        registry.refuse(tool, dataset.name, str(err), params_of(args))
        raise
    return Target(role, registry, dataset, noise)


def _optional_registry(args) -> Registry | None:
    """An unregistered run is recorded when the registry opens; otherwise it warns and runs."""
    from core.registry import Registry

    try:
        return Registry(args.registry)
    except InputError as err:
        print(f"dpx: warning: this run is not recorded: {err}", file=sys.stderr)
        return None


def single_table(dataset: Dataset, tool: str) -> str:
    private = dataset.private_tables
    if len(private) != 1:
        raise InputError(
            f"dpx {tool} reads one table, but dataset '{dataset.name}' has {len(private)} "
            "private tables. Fix: register the table as its own dataset."
        )
    return private[0].path


def declared_schema(dataset: Dataset) -> TableSchema | None:
    """The declared schema of a one-table tool's table (None: registered before schemas were
    stored, registry v3 or older; such a table is read by inference, as before)."""
    private = dataset.private_tables
    return dataset.schema(private[0].name) if len(private) == 1 else None


def registry_info(registry: Registry, release: Release) -> dict:
    """The charge and what remains, for the output of a governed command."""
    from core.registry import RunKind

    info = {
        "release_id": release.id,
        "kind": release.kind.value,
        "dataset": release.dataset,
        "epsilon_charged": shown(release.epsilon) if release.kind is RunKind.RELEASE else 0.0,
        "delta_charged": shown(release.delta) if release.kind is RunKind.RELEASE else 0.0,
    }
    if release.dataset is not None:
        from core.planning.standing import standing

        eps_left, delta_left = registry.remaining(release.dataset)
        info["epsilon_remaining"] = shown(eps_left)
        info["delta_remaining"] = shown(delta_left)
        if release.kind is RunKind.RELEASE:
            place = standing(registry, release)
            info["plan"] = {**place.to_json(), "sentence": place.sentence}
    return info


def registry_line(info: dict) -> str:
    from core.registry import RunKind

    if info["kind"] == RunKind.RELEASE.value:
        return (
            f"release #{info['release_id']} of dataset '{info['dataset']}': charged epsilon "
            f"{info['epsilon_charged']:g}, delta {info['delta_charged']:g}; remaining epsilon "
            f"{info['epsilon_remaining']:g}, delta {info['delta_remaining']:g}"
            + (f". {info['plan']['sentence']}" if info.get("plan") else "")
        )
    if info["kind"] == RunKind.DEMO.value:
        return f"demo run #{info['release_id']} (seeded: not a release, nothing charged)"
    return f"unregistered run #{info['release_id']} (recorded; not limited across runs)"


def release_view(registry: Registry, record: Release) -> dict:
    """Everything an analyst sees of a release, rendered from its registry record only."""
    from core.governance.artefacts import artefact_of, to_json

    art = artefact_of(record)
    return {
        "release_id": record.id,
        "tool": record.tool,
        "method": record.method,
        "dataset": record.dataset,
        "status": record.status.value,
        "mode": record.mode,
        "unit": record.claim.unit,
        "unit_column": record.claim.unit_column,
        **({"rho1": record.claim.rho1, "rho2": record.claim.rho2} if record.claim.rho1 else {}),
        "registry": registry_info(registry, record),
        "mechanisms": [m.to_json() for m in record.mechanisms],
        "result": None if art is None else to_json(art),
    }


def view_text(view: dict, headline: str) -> str:
    lines = [headline, f"unit: {view['unit']}"]
    for m in view["mechanisms"]:
        scale = "" if m.get("scale") is None else f", scale {m['scale']:.4g}"
        lines.append(f"  {m['label']}: {m['kind']}, epsilon {m['epsilon']:g}{scale}")
    lines.append(registry_line(view["registry"]))
    return "\n".join(lines)
