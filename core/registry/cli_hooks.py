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

from collections.abc import Callable

from core import cliargs
from core.errors import InputError
from core.privacy import BudgetLedger, make_spend
from core.registry.governed import (
    Handler,
    Tool,
    as_json,
    noise_mode,
    open_registry,
    params_of,
    registry_info,
    registry_line,
    remaining_text,
    resolve_dataset,
)
from core.registry.ledger import RegistryLedger, mechanisms_from_spends
from core.registry.models import Dataset


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


# -- sql -------------------------------------------------------------------------------------
def govern_sql(handle: Callable, text_of: Callable) -> Handler:
    """Wrap `dpx sql`. `handle(args, ledger, caps)` is the tool's guarded entry and
    `text_of(result)` its text rendering.

    Registered dataset: the DP SQL service charges a `RegistryLedger` (one atomic registry
    transaction) before reading any data, with the dataset policy's per-query caps. Files given
    directly: the run is as today and is recorded afterwards (not limited across runs).
    `--dry-run` and `--export-bigquery` read no data and are not recorded."""
    from core.dpsql.legacy import QueryCaps

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
