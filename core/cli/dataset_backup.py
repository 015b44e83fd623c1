"""`dpx dataset backup|restore` and the budget-history lines `dpx dataset show` prints (split
from `core.cli.dataset`). A restore is recorded in each dataset's budget history (issue 27
item 5); one that would lower a dataset's spend is refused without --allow-spend-decrease."""

from __future__ import annotations

from pathlib import Path

from core import cliargs
from core.governance import Role, current_role, require_owner
from core.registry import BudgetChange, ChangeKind


def register_backup(actions, common) -> None:
    saved = actions.add_parser(
        "backup", parents=[common], help="copy the registry to a file (consistent while in use)"
    )
    saved.add_argument(
        "--out", type=cliargs.OUTPUT_FILE, required=True, metavar="FILE", help="the backup file"
    )
    saved.set_defaults(handler=run_backup)

    back = actions.add_parser(
        "restore", parents=[common], help="replace the registry by a backup (owner; stop dpx first)"
    )
    back.add_argument(
        "backup", type=cliargs.BACKUP_FILE, metavar="FILE", help="a file from `dpx dataset backup`"
    )
    back.add_argument(
        "--force",
        action="store_true",
        help="replace a registry that holds datasets or releases, or is damaged (moved aside)",
    )
    back.add_argument(
        "--allow-spend-decrease",
        action="store_true",
        help="allow the restore to lower a dataset's spent budget (recorded in its history)",
    )
    back.set_defaults(handler=run_restore)


def history_json(change: BudgetChange, role: Role) -> dict:
    """A budget-history entry; an analyst sees a restore without its backup's name or hash."""
    out = change.to_json()
    if role is not Role.OWNER:
        out.pop("backup", None)
        out.pop("backup_sha256", None)
    return out


def history_words(c: dict) -> str:
    """One budget-history entry (its JSON form) as a line."""
    if c["kind"] != ChangeKind.RESTORE.value:
        return (
            f"{c['time']} total set: epsilon {c['epsilon_before']:g} -> {c['epsilon_after']:g}, "
            f"delta {c['delta_before']:g} -> {c['delta_after']:g}"
        )

    def spend(pair) -> str:
        return "absent" if pair is None else f"epsilon {pair[0]:g}, delta {pair[1]:g}"

    source = f" from {c['backup']} (sha256 {c['backup_sha256'][:16]}...)" if "backup" in c else ""
    note = f" ({c['note']})" if c.get("note") else ""
    return (
        f"{c['time']} RESTORE{source}: spent {spend(c['spent_before'])} -> "
        f"{spend(c['spent_after'])}{note}"
    )


def run_backup(args) -> dict | str:
    from core.registry.store import backup, default_directory

    require_owner(current_role(), "backing up the registry")
    directory = Path(args.registry).expanduser() if args.registry else default_directory()
    path = backup(directory, args.out)
    if args.json:
        return {"registry": str(directory), "backup": str(path)}
    return f"registry {directory} backed up to {path}"


def run_restore(args) -> dict | str:
    from core.registry.store import default_directory, restore

    require_owner(current_role(), "restoring the registry")
    directory = Path(args.registry).expanduser() if args.registry else default_directory()
    done = restore(
        args.backup,
        directory,
        force=args.force,
        allow_spend_decrease=args.allow_spend_decrease,
    )
    changes = [{"dataset": c.dataset} | c.to_json() for c in done.changes]
    if args.json:
        return {
            "registry": str(done.path),
            "restored_from": str(args.backup),
            "backup_sha256": done.backup_sha256,
            "moved_aside": None if done.moved_aside is None else str(done.moved_aside),
            "budget_history_entries": changes,
        }
    lines = [f"registry {done.path} restored from {args.backup} (sha256 {done.backup_sha256})"]
    lines += [f"  {c['dataset']}: " + history_words(c) for c in changes]
    lines += ["recorded in each dataset's budget history (`dpx dataset show NAME`)"] * bool(changes)
    return "\n".join(lines)
