"""Registry governance for `dpx htf`, `dpx sql` and `dpx balance` (`--dataset NAME`).

Each capability CLI adds `add_dataset_argument(parser)` and wraps its handler with
`govern_htf` / `govern_sql` / `govern_balance`. A governed run:
1. resolves `--dataset NAME` to the registered files (refused if their bytes changed) or takes
   the files given directly (an unregistered run: recorded, not limited across runs);
2. refuses seeded noise on a registered dataset not flagged `teaching`;
3. charges the registry atomically *before* any data-dependent work (over-budget / over-cap:
   exit 2 with the remaining budget, recorded as a refusal that charges nothing);
4. runs the tool and attaches the released artefact; a failure after the charge keeps the
   charge, is recorded as failed and says so.
Seeded runs are recorded as labelled demo runs and never count as releases.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from core import cliargs
from core.errors import InputError
from core.privacy import BudgetLedger, from_json, make_spend
from core.registry.governed import (
    Handler,
    Tool,
    as_json,
    check_columns,
    compute_after_charge,
    keeps_own_output,
    noise_mode,
    open_registry,
    params_of,
    refused_if_bad,
    registry_info,
    registry_line,
    remaining_text,
    resolve_dataset,
    run_unchanged,
    single_table,
)
from core.registry.ledger import RegistryLedger, mechanisms_from_spends
from core.registry.models import Claim, Dataset, Mechanism, RunKind


def add_dataset_argument(p, optional: tuple[str, ...] = ()) -> None:
    """`--dataset NAME`: read the tables of a registered dataset and charge its budget.

    `optional` names arguments (e.g. the INPUT positional, `uid`) that become optional because
    `--dataset` supplies them; the governed handler checks that one of the two was given."""
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


# -- htf -------------------------------------------------------------------------------------
def govern_htf(handler: Handler) -> Handler:
    """Wrap `dpx htf` (and `dpx release --method M`): charges the full --epsilon before the
    points are read. The recorded tool is "htf", or the requested method of `dpx release`."""

    def run(args):
        tool_name = str(getattr(args, "method", None) or Tool.HTF.value).lower()
        registered = args.dataset is not None
        if registered and args.input:
            raise InputError("give INPUT or --dataset NAME, not both.")
        if not registered and not args.input:
            raise InputError(
                f"dpx {getattr(args, 'command', None) or 'htf'} needs INPUT (a CSV/Parquet "
                "file) or --dataset NAME."
            )
        if not args.epsilon > 0:
            raise InputError(f"--epsilon must be > 0, got {args.epsilon:g}.")
        from core.spatial.cli import bbox_from_args  # a bad --bbox/--region: refused uncharged

        if bbox_from_args(args) is None and args.seed is None:
            raise InputError(
                "no --bbox given. The bounding box is public and must not come from the private "
                "data: pass --bbox MINLON,MINLAT,MAXLON,MAXLAT or --region NAME."
            )
        unit_claim = _location_unit(args)
        registry = open_registry(args, registered)
        dataset = resolve_dataset(registry, Tool.HTF, args) if registered else None
        if dataset is not None:
            args.input = single_table(dataset, Tool.HTF)
            refused_if_bad(
                registry,
                Tool.HTF,
                args,
                lambda: check_columns(args.input, {"latitude": args.lat, "longitude": args.lon}),
            )
        release = None
        if registry is not None:
            release = registry.charge(
                "location",
                None if dataset is None else dataset.name,
                {**params_of(args), "method": tool_name},
                [Mechanism(f"{tool_name}: location histogram (planned total)", args.epsilon)],
                noise_mode(args),
                privacy=unit_claim,
            )
        if keeps_own_output(release, args):
            return run_unchanged(registry, release, handler, args)
        result = compute_after_charge(registry, release, lambda: as_json(handler, args))
        artefact = {k: v for k, v in result.items() if not k.startswith("n_points")}
        rows = _location_rows(result.get("mechanisms"))
        registry.attach(release.id, artefact, rows)
        if release.kind is RunKind.RELEASE:
            result["registry"] = registry_info(registry, release)
        return result if args.json else _htf_text(result, result.get("registry"))

    return run


def _location_unit(args) -> Claim:
    """Whom a location release protects: one point, or each person (--uid, at most K points)."""
    from core.spatial.cli import unit_of  # a bad --uid/--max-points-per-person: refused uncharged

    unit = unit_of(args)
    return Claim(unit=unit.describe(), unit_column=unit.column)


def _location_rows(rows: list[dict] | None) -> list | None:
    """The mechanisms that drew a location release, read back typed from its JSON rows
    (`core.spatial.release.charge_rows`: each row is `Mechanism.to_json()` plus its share of
    the cost); None (keep the planned row) when the release states none."""
    if not rows:
        return None
    return [from_json(r) for r in rows]


def _htf_text(result: dict, info: dict | None) -> str:
    height = "" if result.get("height") is None else f", height {result['height']}"
    lines = [
        f"{result.get('label') or 'HTF'} release: {result['n_leaves']} leaves{height}, "
        f"mode {result['mode']}",
        "epsilon: " + ", ".join(f"{k} {v:g}" for k, v in result["epsilon"].items()),
    ]
    if "warning" in result:
        lines.append(result["warning"])
    if "out" in result:
        lines.append(f"written to {result['out']}")
    if info is not None:
        lines.append(registry_line(info))
    return "\n".join(lines)


# -- sql -------------------------------------------------------------------------------------
def govern_sql(handle: Callable, text_of: Callable) -> Handler:
    """Wrap `dpx sql`. `handle(args, ledger, caps)` is the tool's guarded entry and
    `text_of(result)` its text rendering.

    Registered dataset: the DP SQL service charges a `RegistryLedger` (one atomic registry
    transaction) before reading any data, with the dataset policy's per-query caps. Files given
    directly: the run is as today and is recorded afterwards (not limited across runs).
    `--dry-run` and `--export-bigquery` read no data and are not recorded."""
    from core.dpsql.caps import QueryCaps

    def run(args):
        registered = args.dataset is not None
        if not registered:
            return _sql_unregistered(handle, text_of, args)
        if args.table:
            raise InputError("give --table files or --dataset NAME, not both.")
        if args.budget_epsilon is not None:
            raise InputError(
                "--budget-epsilon does not apply to a registered dataset: its budget is in "
                "the registry (`dpx dataset show NAME`)."
            )
        registry = open_registry(args, True)
        dataset = resolve_dataset(registry, Tool.SQL, args)
        _use_dataset_tables(args, dataset)
        p = dataset.policy
        caps = QueryCaps(
            p.max_epsilon_per_query, p.max_delta_per_query, f"dataset `{dataset.name}` policy"
        )
        if args.dry_run or args.export_bigquery:  # public parameters only; nothing charged
            return handle(args, BudgetLedger(), caps)
        ledger = RegistryLedger(
            registry, Tool.SQL.value, dataset, params_of(args), noise_mode(args)
        )
        try:
            result = as_json(lambda a: handle(a, ledger, caps), args)
        except InputError as err:
            if ledger.release is not None:
                registry.fail(ledger.release.id, str(err))
                raise
            if not ledger.refused:  # the registry's charge step records its own refusals
                registry.refuse(Tool.SQL.value, dataset.name, str(err), params_of(args))
            if "remaining epsilon" in str(err):
                raise
            raise type(err)(f"{err} {remaining_text(registry, dataset)}") from None
        if ledger.release is None:  # nothing was charged (no noisy statistic)
            return result if args.json else text_of(result)
        registry.attach(ledger.release.id, result)
        result = {**result, "registry": registry_info(registry, ledger.release)}
        if args.json:
            return result
        return text_of(result) + "\n" + registry_line(result["registry"])

    return run


def _sql_unregistered(handle: Callable, text_of: Callable, args):
    """Files given directly: output exactly as today; a charged run is recorded afterwards."""
    if args.dry_run or args.export_bigquery:
        return handle(args)
    result = as_json(handle, args)
    spends = [make_spend(**s) for s in result.get("ledger", [])]
    if spends:
        registry = open_registry(args, False)
        if registry is not None:
            release = registry.charge(
                Tool.SQL.value,
                None,
                params_of(args),
                mechanisms_from_spends(spends),
                noise_mode(args),
            )
            registry.attach(release.id, result)
    return result if args.json else text_of(result)


def _use_dataset_tables(args, dataset: Dataset) -> None:
    if not dataset.uid:
        raise InputError(
            f"dataset '{dataset.name}' has no privacy-unit column: DP SQL needs one. Fix: "
            "register it with --uid COL."
        )
    if args.uid and args.uid != dataset.uid:
        raise InputError(
            f"--uid {args.uid} differs from dataset '{dataset.name}''s unit {dataset.uid}."
        )
    if getattr(args, "row_is_unit", False):
        raise InputError("--row-is-unit does not apply to a registered dataset: its unit is set.")
    args.uid = dataset.uid
    args.table = [f"{t.name}={t.path}" for t in dataset.private_tables]
    # the dataset's public tables, plus any public table given on the command line
    args.public = [f"{t.name}={t.path}" for t in dataset.public_tables] + list(args.public)


# -- balance ---------------------------------------------------------------------------------
def govern_balance(handler: Handler) -> Handler:
    """Wrap `dpx balance`: PP is not ε-DP; a run is recorded as a (ρ1, ρ2) publication that
    charges no ε, before the table is read."""

    def run(args):
        registered = args.dataset is not None
        if registered and (args.input or args.freqs):
            raise InputError("give INPUT/--freqs or --dataset NAME, not both.")
        registry = open_registry(args, registered)
        dataset = resolve_dataset(registry, Tool.PP, args) if registered else None
        if dataset is not None:
            args.input = single_table(dataset, Tool.PP)
            refused_if_bad(
                registry,
                Tool.PP,
                args,
                lambda: check_columns(args.input, {"sensitive attribute": args.sa}),
            )
        release = None
        if registry is not None:
            release = registry.charge(
                Tool.PP.value,
                None if dataset is None else dataset.name,
                params_of(args),
                [],
                noise_mode(args),
                privacy={
                    "model": "(rho1, rho2)-privacy (PP balancing); not epsilon-DP",
                    "rho1": args.rho1,
                    "rho2": args.rho2,
                    "unit": "one record",
                },
            )
        if keeps_own_output(release, args):
            return run_unchanged(registry, release, handler, args)
        result = compute_after_charge(registry, release, lambda: as_json(handler, args))
        artefact = dict(result)
        published = result.get("published")
        if published:
            meta = Path(published["metadata"])
            if meta.is_file():
                artefact["published_metadata"] = json.loads(meta.read_text())
        registry.attach(release.id, artefact)
        if release.kind is RunKind.RELEASE:
            result["registry"] = registry_info(registry, release)
        if args.json:
            return result
        lines = [
            f"PP partition: status {result['status']}, {len(result['groups'])} groups, "
            f"rho1 {result['rho1']}, rho2 {result['rho2']}"
        ]
        if result.get("published"):
            pub = result["published"]
            lines.append(
                f"published {pub['rows']} rows to {pub['out']} (metadata {pub['metadata']})"
            )
        if "registry" in result:
            lines.append(
                registry_line(result["registry"]).replace(
                    "charged epsilon 0, delta 0", "a (rho1, rho2) publication, no epsilon charged"
                )
            )
        return "\n".join(lines)

    return run
