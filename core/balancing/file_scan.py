"""A PP table read where it lies: DuckDB views over a Parquet or CSV file, and the sensitive
attribute's value counts computed by the engine (issue 22: value counts in the engine).

`open_records(path, sa, columns, workdir)` opens a locked DuckDB connection whose view `records`
holds the columns a publication uses (the SA and the published columns), with NaN in floating
columns as NULL (pandas reads NaN as missing, so the in-memory path does too). The connection
may open only the input file and `workdir` (its spill directory and the staged output), the
way DP SQL's sandbox may open only its scanned files (`core.dpsql.execute.scan.allow`).
`value_counts(records, missing)` then counts the SA's values in one GROUP BY and applies the
checks `core.balancing.records.encode_sa` makes on a loaded column (empty table, nested values,
too many distinct values, decimal measurements, missing values), with the same one-line errors;
only the distinct values and their counts come back to Python (at most `MAX_SA_VALUES` rows).

Labels: each distinct value is converted to pandas the way loading the file would convert it
(an integer column with a NULL becomes float) and labelled with `str`, exactly as
`core.balancing.records.label_codes` labels a loaded column: the plan, the metadata and the
published values are spelled as on the in-memory path.

Privacy: nothing here releases anything. It runs inside the governed computation, after the
charge; which check fails depends on the private file, which is allowed there. The file's
column names and types (its header or Parquet footer) are public facts the owner registered.
Memory: bounded by `MEMORY_LIMIT` (DuckDB spills to `workdir` beyond it), not by the file.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from core.balancing.records import (
    FEW_VALUES,
    MISSING_POLICIES,
    check_distinct,
    label_codes,
    nested_column_error,
)
from core.data.declared import TableSchema
from core.data.loading import refuse_non_text
from core.data.relation import guard_connection, relation_sql
from core.data.validation import require_column
from core.dpsql.execute.scan import FLOAT_TYPES, allow, identifier, literal
from core.errors import InputError
from core.spatial.scan import NULL_TEXTS, ScanUnavailable

MEMORY_LIMIT = "1GB"  # DuckDB spills beyond this: the process stays near it at any file size
NESTED_TYPES = ("[]", "STRUCT", "MAP", "UNION", "[")  # a LIST is "T[]", an ARRAY "T[n]"
RECORDS = "records"  # the view over the file
CSV_TYPES = "['BOOLEAN', 'BIGINT', 'DOUBLE', 'VARCHAR']"


@dataclass(frozen=True)
class FileRecords:
    """A DuckDB connection with the view `records` over the file: the SA and published columns."""

    con: object
    sa: str
    columns: tuple[str, ...]  # the view's columns (the SA first, then the others, no repeat)
    types: dict[str, str]  # DuckDB's type of each of them

    def close(self) -> None:
        self.con.close()


def is_parquet(path: Path) -> bool:
    with path.open("rb") as fh:
        magic = fh.read(4)
    return path.suffix.lower() in (".parquet", ".pq") or magic == b"PAR1"


def open_records(
    path: str | Path,
    sa: str,
    columns: Sequence[str],
    workdir: str | Path,
    outputs: Sequence[str | Path] = (),
    schema: TableSchema | None = None,
) -> FileRecords:
    """Open `path` as the view `records` (module docstring); the connection may open only
    `path`, `workdir` and the files `outputs` (the staged publication). Raises `ScanUnavailable` when
    DuckDB cannot read the file as a table (the caller loads it with pandas, which explains
    what is wrong), `InputError` (one line) for a missing or nested column.

    `schema`: a registered table's declared schema. The file is then read as declared
    (`core.data.relation.relation_sql`: the declared types, whatever values the file holds;
    no value makes the read fail) and `ScanUnavailable` is never raised."""
    import duckdb

    path = Path(path).resolve()
    if not path.is_file():
        raise InputError(f"file not found: {path}. Fix: check the path.")
    if schema is None:
        refuse_non_text(path)  # UTF-16 or binary: one line saying so, before DuckDB guesses
    con = duckdb.connect(config={"memory_limit": MEMORY_LIMIT})
    try:
        con.execute("SET temp_directory = ?", [str(workdir)])
        con.execute("SET preserve_insertion_order = true")  # chunks come in file order
        if schema is not None:
            guard_connection(con)  # the declared read stays total (core.data.relation)
            source = f"({relation_sql(path, schema)})"
        elif is_parquet(path):
            source = f"read_parquet({literal(str(path))})"
        else:
            source = (  # the types pandas infers (no dates): the same labels as loading
                f"read_csv({literal(str(path))}, header = true, nullstr = {NULL_TEXTS}, "
                f"auto_type_candidates = {CSV_TYPES})"
            )
        if schema is not None:
            native = {name: kind.upper() for name, kind in schema.types().items()}
        else:
            try:
                described = con.execute(f"DESCRIBE SELECT * FROM {source}").fetchall()
            except duckdb.Error as err:
                raise ScanUnavailable(str(err)) from None
            native = {str(row[0]): str(row[1]).upper() for row in described}
        wanted = list(dict.fromkeys([sa, *columns]))
        header = pd.DataFrame(columns=list(native))  # names only: the loaded path's messages
        require_column(header, sa, "sensitive attribute column")
        for name in wanted:
            if name not in native:
                raise InputError(f"column '{name}' not found. Columns: {', '.join(native)}.")
        if any(marker in native[sa] for marker in NESTED_TYPES):
            raise nested_column_error(sa)
        select = []
        for name in wanted:
            ref = identifier(name)
            if native[name] in FLOAT_TYPES:  # NaN is missing, as when pandas loads the file
                select.append(f"CASE WHEN isnan({ref}) THEN NULL ELSE {ref} END AS {ref}")
            else:
                select.append(ref)
        con.execute(f"CREATE VIEW {RECORDS} AS SELECT {', '.join(select)} FROM {source}")
        con.execute(allow([path, *(Path(p).resolve() for p in outputs)]))
        con.execute("SET allowed_directories = [?]", [str(Path(workdir).resolve()) + "/"])
        con.execute("SET enable_external_access = false")
        return FileRecords(con, sa, tuple(wanted), {n: native[n] for n in wanted})
    except BaseException:
        con.close()
        raise


@dataclass(frozen=True)
class FileCounts:
    """The SA's distinct values as DuckDB typed them, their labels and counts."""

    values: object  # pyarrow Array: the distinct values (NULL included when present)
    label_of_value: np.ndarray  # distinct value -> label index, -1 for a dropped (missing) value
    labels: list[str]
    counts_per_value: np.ndarray  # records per distinct value
    n_missing: int
    missing_policy: str
    missing_cells: dict[str, int]  # the other columns of the view -> their missing cells

    def counts(self) -> dict[str, int]:
        """label -> records, over the kept records (as `EncodedSA.counts`)."""
        kept = self.label_of_value >= 0
        bins = np.bincount(
            self.label_of_value[kept],
            weights=self.counts_per_value[kept],
            minlength=len(self.labels),
        )
        return {self.labels[i]: int(c) for i, c in enumerate(bins) if c > 0}


def value_counts(records: FileRecords, missing: str = "error") -> FileCounts:
    """Count the SA's values in the engine and check the column as `encode_sa` does (same
    one-line errors; none names a value or an exact count)."""
    if missing not in MISSING_POLICIES:
        raise InputError(f"unknown missing-value policy {missing!r}: use drop or category.")
    con, sa = records.con, records.sa
    ref = identifier(sa)
    others = [c for c in records.columns if c != sa]
    # every used column is read here, before anything is drawn: a cell the engine cannot parse
    # fails now (the caller loads the file instead), and the missing cells are counted
    gaps = "".join(f", count(*) - count({identifier(c)}) AS m{i}" for i, c in enumerate(others))
    con.execute(f"CREATE TEMP TABLE sa_counts AS SELECT {ref} AS v, count(*) AS c{gaps} "
                f"FROM {RECORDS} GROUP BY ALL")  # fmt: skip
    sums = ", ".join(f"coalesce(sum(m{i}), 0)" for i in range(len(others)))
    missing_cells = dict(
        zip(others, con.execute(f"SELECT {sums} FROM sa_counts").fetchall()[0], strict=True)
    ) if others else {}  # fmt: skip
    rows, distinct, present, missing_count = con.execute(
        "SELECT coalesce(sum(c), 0), count(v), coalesce(sum(c) FILTER (WHERE v IS NOT NULL), 0), "
        "coalesce(sum(c) FILTER (WHERE v IS NULL), 0) FROM sa_counts"
    ).fetchall()[0]
    if rows == 0:
        raise InputError("the table is empty: there are no records to balance. Provide data rows.")
    check_distinct(sa, int(distinct), int(present))
    if distinct > 2 * FEW_VALUES and records.types[sa] in FLOAT_TYPES:
        decimal = con.execute(
            "SELECT count(*) FROM sa_counts WHERE v IS NOT NULL AND (NOT isfinite(v) "
            "OR v <> round(v))"
        ).fetchall()[0][0]
        if decimal:
            raise InputError(
                f"column '{sa}' looks continuous (a decimal measurement with many distinct "
                "values): PP needs a categorical sensitive attribute with few values. Bin it into "
                "a few categories first, or pick another column."
            )
    if missing_count and missing == "error":
        raise InputError(
            f"the sensitive attribute '{sa}' has missing values. Choose to drop those "
            "records or to count 'missing' as a category of its own (CLI: --missing drop|category)."
        )
    table = con.sql("SELECT v, c FROM sa_counts").to_arrow_table()
    con.execute("DROP TABLE sa_counts")
    values = table.column("v").combine_chunks()
    as_loaded = pd.Series(values.to_pandas(), name=sa)  # the dtype loading the file gives
    codes, labels = label_codes(as_loaded, drop_missing=bool(missing_count) and missing == "drop")
    return FileCounts(
        values=values,
        label_of_value=np.asarray(codes, dtype=np.int64),
        labels=labels,
        counts_per_value=np.asarray(table.column("c").to_numpy(), dtype=np.int64),
        n_missing=int(missing_count),
        missing_policy=missing,
        missing_cells={c: int(m) for c, m in missing_cells.items()},
    )


def file_value_counts(
    path: str | Path,
    sa: str,
    missing: str,
    workdir: str | Path,
    schema: TableSchema | None = None,
) -> FileCounts:
    """The SA's value counts of the file at `path` (the exact plan's input), read in place
    (as declared, with a registered table's `schema`)."""
    import duckdb

    records = open_records(path, sa, [sa], workdir, schema=schema)
    try:
        return value_counts(records, missing)
    except duckdb.Error as err:  # e.g. a CSV row DuckDB cannot parse: the pandas reader says why
        raise ScanUnavailable(str(err)) from None
    finally:
        records.close()
