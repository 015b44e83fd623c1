"""Declared public facts of registered datasets on the command line (issue 27).

dpx dataset add ... [--schema T=FILE.json] [--max-rows T=N]
    every table's schema is proposed from what its file declares (Parquet's logical types and
    required flags; a typed read of a CSV sample), unless given whole in a file
dpx dataset schema NAME [--table T] [--json]                      show (anyone: it is public)
dpx dataset schema NAME [--table T] --set COL=type[,nullable|,required][,max=N]
                  [,categories=a|b|c][,bounds=LO:HI] [--max-rows N] [--from-file FILE.json]
    edit (owner); every edit is recorded in the schema history with before and after

A schema file is `TableSchema.to_json()`: {"columns": [{"name", "type", "nullable",
"max_length", "categories", "bounds"}], "max_rows", "delimiter"}; its columns must be the
file's, exactly and in order.
"""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

from core import cliargs
from core.data.declared import (
    MAX_TEXT_LENGTH,
    SIZE_CLASSES,
    ColumnFact,
    ColumnType,
    SchemaSource,
    TableSchema,
)
from core.errors import InputError
from core.governance import current_role, require_owner
from core.registry import Dataset, Registry, SchemaChange
from core.registry.schemas import REGISTERED_PROPOSED

MAX_ROWS = cliargs.Integer(1, SIZE_CLASSES[-1], example="--max-rows 1000000")
MAX_LENGTH = cliargs.Integer(1, MAX_TEXT_LENGTH, example="max=64")
SCHEMA_FILE = cliargs.InputFile("schema JSON file (TableSchema.to_json form)")
_SCHEMA_FILE_MAX = 10 * 2**20
_TABLE_KEYS = {"columns", "max_rows", "source", "delimiter"}
_COLUMN_KEYS = {"name", "type", "nullable", "max_length", "categories", "bounds"}
EDIT_HINT = (
    "dpx dataset schema {name} --table T --set COL=type[,nullable|,required][,max=N]"
    "[,categories=a|b|c][,bounds=LO:HI] (or --from-file FILE.json, --max-rows N)"
)
PROPOSED = (
    "proposed from what each file declares (Parquet logical types and required flags; for CSV "
    "a typed read of a sample), never from null counts, statistics or value lengths: check it"
)


def number(validator: cliargs.Validator, text: str, what: str) -> int:
    """`validator(text)` with its refusal as one line naming `what` (an `InputError`)."""
    try:
        return validator(text)
    except cliargs.Refused as err:
        raise InputError(f"{what}: {err}") from None


# -- reading a schema file ------------------------------------------------------------------
def load_schema(path: str | Path, what: str) -> TableSchema:
    """A `TableSchema` from a JSON file in `to_json` form, refused in one line if it is not."""
    path = Path(path)

    def bad(problem: str) -> InputError:
        return InputError(
            f"{what} {path.name}: {problem}. Fix: write it as `dpx dataset schema NAME --json` "
            'shows a table\'s schema: {"columns": [{"name": ..., "type": ...}], "max_rows": N}.'
        )

    try:
        if path.stat().st_size > _SCHEMA_FILE_MAX:
            raise bad("the file is larger than 10 MB")
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"{what}: file not found: {path}. Fix: check the path.") from None
    except OSError as err:
        raise InputError(f"{what}: cannot read {path}: {err.strerror}. Fix: check it.") from None
    except UnicodeDecodeError:
        raise bad("not UTF-8 text") from None
    except json.JSONDecodeError as err:
        raise bad(f"not valid JSON ({err.msg} at line {err.lineno} column {err.colno})") from None
    if not isinstance(data, dict) or not isinstance(data.get("columns"), list):
        raise bad("expected an object with a list of 'columns'")
    if not isinstance(data.get("max_rows"), int) or isinstance(data.get("max_rows"), bool):
        raise bad("'max_rows' (the size class, a whole number) is missing or not a number")
    unknown = sorted(set(data) - _TABLE_KEYS)
    for column in data["columns"]:
        if not isinstance(column, dict):
            raise bad("each column must be an object with 'name' and 'type'")
        unknown += sorted(set(column) - _COLUMN_KEYS)
        if not isinstance(column.get("name"), str) or not isinstance(column.get("type"), str):
            raise bad("each column needs a 'name' and a 'type' (text)")
        if not isinstance(column.get("nullable", True), bool):
            raise bad(f"column '{column['name']}': 'nullable' must be true or false")
        categories, bounds = column.get("categories"), column.get("bounds")
        if categories is not None and not isinstance(categories, list):
            raise bad(f"column '{column['name']}': 'categories' must be a list")
        if bounds is not None and not (
            isinstance(bounds, list)
            and len(bounds) == 2
            and all(isinstance(b, int | float) and not isinstance(b, bool) for b in bounds)
        ):
            raise bad(f"column '{column['name']}': 'bounds' must be [low, high], two numbers")
    if unknown:
        raise bad(f"unknown key(s) {', '.join(dict.fromkeys(unknown))}")
    try:
        return replace(TableSchema.from_json(data), source=SchemaSource.DECLARED)
    except InputError as err:
        raise bad(str(err).split(" Fix:")[0].rstrip(".")) from None
    except (TypeError, ValueError) as err:
        raise bad(f"a value has the wrong kind ({type(err).__name__})") from None


def table_values(values: list[str], flag: str, tables: list[str]) -> dict[str, str]:
    """`T=VALUE` options as {table: value}, each naming a table of the dataset, once."""
    out: dict[str, str] = {}
    for v in values:
        table, sep, value = v.partition("=")
        table, value = table.strip(), value.strip()
        if not sep or not table or not value:
            raise InputError(f"{flag} expects TABLE=VALUE, got '{v}'. Fix: e.g. {flag} t=...")
        if table not in tables:
            raise InputError(
                f"{flag} names table '{table}', not one of this dataset's tables "
                f"({', '.join(tables)}). Fix: name a table given with --table or --public."
            )
        if table in out:
            raise InputError(f"{flag} names table '{table}' twice. Fix: give it once.")
        out[table] = value
    return out


def schemas_for_add(args, files: list[tuple[str, str]]) -> dict[str, TableSchema]:
    """The schemas `dpx dataset add` registers: each `--schema T=FILE.json` (checked against
    its table's file by the registry), else proposed from the file; `--max-rows T=N` sets
    the size class."""
    from core.data.relation import propose

    names = [t for t, _ in files]
    given = table_values(getattr(args, "schema", []), "--schema", names)
    rows = {
        t: number(MAX_ROWS, v, f"--max-rows {t}=")
        for t, v in table_values(getattr(args, "max_rows", []), "--max-rows", names).items()
    }
    out = {}
    for table, path in files:
        if table in given:
            schema = load_schema(given[table], f"--schema {table}=")
            out[table] = replace(schema, max_rows=rows[table]) if table in rows else schema
        else:
            proposal = propose(path, rows.get(table))  # accepted as proposed: so labelled
            out[table] = replace(proposal, source=SchemaSource.INFERRED)
    return out


# -- editing ---------------------------------------------------------------------------------
def edit_column(schema: TableSchema, spec: str) -> TableSchema:
    """`schema` with one column redeclared by `COL=type[,nullable|,required][,max=N]
    [,categories=a|b|c][,bounds=LO:HI]`. An empty type keeps the column's; facts not given
    keep their value while the type stays, and are dropped when it changes."""
    name, sep, rest = spec.partition("=")
    old = schema.column(name.strip())
    if not sep or old is None:
        raise InputError(
            f"--set expects COL=type[,...] naming a column of the table ({', '.join(schema.names)}"
            f"), got '{spec}'. Fix: e.g. --set {schema.names[0]}=integer,bounds=0:120."
        )
    kind, *options = [p.strip() for p in rest.split(",")]
    new_type = ColumnType.parse(kind) if kind else old.type
    same = new_type is old.type
    facts = {
        "nullable": old.nullable,
        "max_length": old.max_length if same else None,
        "categories": old.categories if same else None,
        "bounds": old.bounds if same else None,
    }
    for option in options:
        key, eq, value = (p.strip() for p in option.partition("="))
        if not eq and key in ("nullable", "required"):
            facts["nullable"] = key == "nullable"
        elif eq and value == "" and key in ("max", "categories", "bounds"):
            facts[{"max": "max_length"}.get(key, key)] = None  # `max=` drops the fact
        elif eq and key == "max":
            facts["max_length"] = number(MAX_LENGTH, value, f"--set {name.strip()}: max")
        elif eq and key == "categories":
            facts["categories"] = tuple(v.strip() for v in value.split("|"))
        elif eq and key == "bounds":
            facts["bounds"] = _bounds(value)
        else:
            raise InputError(
                f"--set {name.strip()}: unknown option '{option}'. Fix: use nullable, required, "
                "max=N, categories=a|b|c or bounds=LO:HI."
            )
    return schema.with_column(ColumnFact(old.name, new_type, **facts))


def _bounds(text: str) -> tuple[float, float]:
    low, sep, high = text.partition(":")
    try:
        if sep:
            values = float(low), float(high)
            if all(math.isfinite(v) for v in values):
                return values
    except ValueError:
        pass
    raise InputError(f"bounds must be LO:HI, two finite numbers, got '{text}'. Fix: bounds=0:120.")


# -- showing ---------------------------------------------------------------------------------
def schema_table(table: str, schema: TableSchema | None) -> list[str]:
    """A table's schema as aligned text lines."""
    if schema is None:
        return [
            f"table {table}: no declared schema (registered before schemas were stored); a "
            "query proposes one from the file, labelled inferred"
        ]
    sep = {"\t": "tab"}.get(schema.delimiter, schema.delimiter)
    lines = [f"table {table}: max rows {schema.max_rows:,} (size class), CSV separator {sep!r}"]
    rows = [("column", "type", "nullable", "max length", "categories", "bounds")]
    for c in schema.columns:
        rows.append(
            (
                c.name,
                c.type.name.lower(),
                "yes" if c.nullable else "no",
                "-" if c.max_length is None else str(c.max_length),
                "-" if c.categories is None else "|".join(c.categories),
                "-" if c.bounds is None else f"{c.bounds[0]:g}:{c.bounds[1]:g}",
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines += [
        "  " + "  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)).rstrip() for r in rows
    ]
    return lines


def change_words(change: SchemaChange) -> str:
    """One line: when, which table, and what changed."""
    if change.before is None:
        return f"{change.time} table {change.table}: {change.note or 'registered'}"
    before, after = change.before, change.after
    parts = []
    if before.max_rows != after.max_rows:
        parts.append(f"max rows {before.max_rows:,} -> {after.max_rows:,}")
    for c in after.columns:
        was = before.column(c.name)
        if was != c:
            parts.append(f"{c.name}: {_fact(was)} -> {_fact(c)}")
    what = "; ".join(parts) or "no change"
    return f"{change.time} table {change.table}: {what}" + (
        f" ({change.note})" if change.note else ""
    )


def _fact(c: ColumnFact | None) -> str:
    if c is None:
        return "none"
    out = [c.type.name.lower(), "nullable" if c.nullable else "required"]
    if c.max_length is not None:
        out.append(f"max={c.max_length}")
    if c.categories is not None:
        out.append("categories=" + "|".join(c.categories))
    if c.bounds is not None:
        out.append(f"bounds={c.bounds[0]:g}:{c.bounds[1]:g}")
    return ",".join(out)


def proposed_tables(d: Dataset, history: list[SchemaChange]) -> list[str]:
    """The tables whose schema is still the proposal accepted at registration."""
    last = {c.table: c for c in history}
    return [t.name for t in d.tables if t.name in last and last[t.name].note == REGISTERED_PROPOSED]


def schema_note(d: Dataset, proposed: list[str]) -> str:
    """What `dataset add` and `show` say about where the schemas come from and how to edit."""
    missing = [t.name for t in d.tables if d.schema(t.name) is None]
    parts = []
    if proposed:
        parts.append(f"schemas of {', '.join(proposed)} {PROPOSED}")
    if missing:
        parts.append(f"no schema stored for {', '.join(missing)} (registered before schemas were)")
    if not parts:
        return "every schema was declared or confirmed by the owner"
    return "; ".join(parts) + f"; edit: {EDIT_HINT.format(name=d.name)}"


def schemas_json(d: Dataset) -> dict:
    return {t.name: (None if d.schema(t.name) is None else d.schema(t.name).to_json())
            for t in d.tables}  # fmt: skip


# -- the subcommand --------------------------------------------------------------------------
def register_schema(actions, common) -> None:
    p = actions.add_parser(
        "schema",
        parents=[common],
        help="a dataset's declared public facts: show (anyone) or edit (owner; recorded)",
    )
    p.add_argument("name", type=cliargs.NAME, metavar="NAME")
    p.add_argument("--table", type=cliargs.NAME, default=None, metavar="T")
    p.add_argument(
        "--set",
        type=cliargs.TEXT,
        action="append",
        default=[],
        metavar="COL=type[,nullable|,required][,max=N][,categories=a|b|c][,bounds=LO:HI]",
        help="redeclare one column (owner)",
    )
    p.add_argument("--max-rows", type=MAX_ROWS, default=None, help="the size class (owner)")
    p.add_argument("--from-file", type=SCHEMA_FILE, default=None, metavar="FILE.json",
                   help="replace the whole schema (owner)")  # fmt: skip
    p.set_defaults(handler=run_schema)


def run_schema(args) -> dict | str:
    registry = Registry(args.registry)
    d = registry.dataset(args.name)
    names = [t.name for t in d.tables]
    if args.table is not None and args.table not in names:
        raise InputError(
            f"dataset '{d.name}' has no table '{args.table}' (tables: {', '.join(names)}). "
            "Fix: name one of them with --table."
        )
    editing = bool(args.set or args.max_rows is not None or args.from_file)
    if editing:
        require_owner(current_role(), "editing a dataset's declared schema")
        d = _edit(registry, d, args)
    shown = [args.table] if args.table else names
    history = [c for c in registry.schema_history(d.name) if c.table in shown]
    if args.json:
        return {
            "name": d.name,
            "schemas": {t: v for t, v in schemas_json(d).items() if t in shown},
            "schema_history": [c.to_json() for c in history],
        }
    lines = [f"{d.name}: declared public facts (edit: {EDIT_HINT.format(name=d.name)})"]
    for t in shown:
        lines += schema_table(t, d.schema(t))
    lines.append("schema history:")
    lines += ["  " + change_words(c) for c in history]
    return "\n".join(lines)


def _edit(registry: Registry, d: Dataset, args) -> Dataset:
    table = args.table
    if table is None:
        if len(d.tables) != 1:
            raise InputError(
                f"dataset '{d.name}' has {len(d.tables)} tables. Fix: name the one to edit with "
                f"--table ({', '.join(t.name for t in d.tables)})."
            )
        table = d.tables[0].name
    schema = d.schema(table)
    if args.from_file:
        schema = load_schema(args.from_file, "--from-file")
    elif schema is None:
        from core.data.relation import propose

        schema = propose(next(t.path for t in d.tables if t.name == table))
    for spec in args.set:
        schema = edit_column(schema, spec)
    if args.max_rows is not None:
        schema = replace(schema, max_rows=args.max_rows)
    words = [*(f"--set {s}" for s in args.set)]
    words += [f"--max-rows {args.max_rows}"] if args.max_rows is not None else []
    words += [f"--from-file {Path(args.from_file).name}"] if args.from_file else []
    registry.set_schema(d.name, table, schema, note="; ".join(words))
    return registry.dataset(d.name)
