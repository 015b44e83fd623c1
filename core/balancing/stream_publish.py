"""A PP publication of a Parquet or CSV file, streamed: the table is never loaded into Python
(issue 22). The same release as `core.balancing.publish.publish`, chunk by chunk:

1. the SA's value counts by DuckDB over the file (`core.balancing.file_scan`), then the plan
   on their noisy counts (`core.balancing.release.release_plan`, the one ε-charged draw);
2. the rows in chunks of `CHUNK_ROWS` records (or plan slots, for the SA-only publication):
   each record draws its sub-table and is randomized within it by the sub-tables'
   `PPRandomization` objects (`core.balancing.assign`), exactly as on the in-memory path; the
   chunk (two shuffle keys, the sub-table, the published value's code, the declared columns)
   is appended to a DuckDB staging table;
3. the secure shuffle and the write: `COPY (SELECT ... ORDER BY key) TO out` — DuckDB sorts
   the staged rows by a key drawn for each row and writes the CSV, spilling to a temporary
   directory beyond its memory limit.

WHY A SORT BY RANDOM KEYS IN THE ENGINE (and not a permutation in memory). A permutation of
just the codes would fit (16 bytes a row: 800 MB at 50M records), but the declared columns
travel with their rows and may be texts of any size, so a shuffle in Python would hold the
published table in memory again, which is what this path removes. Sorting by random keys is
the algorithm of `Noise.permutation` in secure mode: each row gets a key of 106 uniform bits
(two 53-bit words from `Noise.uniform`: OS entropy in secure mode, joined into one HUGEINT,
one sort key: two key columns sorted 9.2 s against 7.7 s on 10M staged rows) and
the rows are ordered by it. The resulting order is a uniformly random permutation of the rows
whenever no two keys are equal, which fails with probability below n^2 / 2^107 (about 10^-17
at 50M rows; DuckDB would then order the tied rows arbitrarily). The keys are drawn
independently of the records' values and positions, so the published row order tells nothing
about the input order; they are never written.

Privacy claim: the one of `publish` ((ρ1, ρ2) per record through one `PPRandomization` per
sub-table; (ε, δ) for the plan: discrete Laplace of scale 2/ε on the value counts,
sensitivity 2, unit: one record's SA value). Everything here runs after the charge.

Not on this path: a dataset with a person column (one record per person needs each person's
records together, `core.balancing.persons`): the CLI publishes it in memory. Seeded runs are
reproducible (same seed, same file, same chunk size: the same bytes) but not byte-identical to
the in-memory path: the draws come in chunks and the shuffle is a sort, not `permutation`.
Written by DuckDB: an integer column with missing cells keeps its integer spelling (pandas
would write 5.0), and an empty text is written as "".
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core.balancing.assign import Slots, draw_record_subtables
from core.balancing.colspec import Kind, column_spec
from core.balancing.file_scan import RECORDS, FileCounts, FileRecords, open_records, value_counts
from core.balancing.names import SEEDED_VALUE
from core.balancing.publish import ROWS_FROM_RECORDS, ROWS_FROM_SLOTS, publication_metadata
from core.balancing.records import MISSING_LABEL
from core.balancing.release import ReleasePlan, ReleaseSettings, release_plan
from core.data.declared import TableSchema
from core.dpsql.execute.scan import identifier, literal
from core.errors import InputError
from core.files import work_directory
from core.privacy import Accountant, PPRandomization
from core.spatial.scan import ScanUnavailable

CHUNK_ROWS = 1 << 20  # records per chunk: ~50 MB of arrays, whatever the file's size
KEY_BITS = 53  # each row's shuffle key: two uniform 53-bit words (Noise.uniform), 106 bits
STAGE = "pp_stage"


@dataclass(frozen=True)
class FilePublication:
    metadata: dict
    release: ReleasePlan
    rows: int


def publish_file(
    path: str | Path,
    sa: str,
    columns: Sequence[str],
    settings: ReleaseSettings,
    accountant: Accountant,
    out: str | Path,
    chunk_rows: int = CHUNK_ROWS,
    schema: TableSchema | None = None,
) -> FilePublication:
    """Publish the file at `path` as a PP release, writing the CSV to `out` (the caller's
    staged temporary: `core.files.atomic_outputs` renames it, so a failure or a kill leaves no
    partial file; DuckDB spills to a temporary directory removed on return). Raises InputError
    on a refusal, and `ScanUnavailable` (before anything is drawn) when DuckDB cannot read the
    file: the caller loads it instead. The arguments and the claim are those of
    `core.balancing.publish.publish` (see the module docstring); no person column here.
    `schema`: a registered table's declared schema, read as declared (`open_records`)."""
    columns = [str(c) for c in columns]
    if sa not in columns or len(set(columns)) != len(columns):
        raise ValueError("columns must list the SA once (columns.py)")
    if chunk_rows < 1:
        raise ValueError("chunk_rows must be >= 1")
    import duckdb
    import pyarrow as pa

    with work_directory("dpx-pp-") as work:
        records = open_records(path, sa, columns, work, outputs=[out], schema=schema)
        try:
            try:  # nothing drawn yet: a file DuckDB cannot read goes to the pandas reader
                counts = value_counts(records, settings.missing)
            except duckdb.Error as err:
                raise ScanUnavailable(str(err)) from None
            plan = release_plan(counts.counts(), settings, accountant)
            stage = _Stage(records, plan, accountant)
            try:  # drawn: a failure now is the release's (one line, no file), never a retry
                if columns == [sa]:
                    rows = stage.add_slots(chunk_rows)
                else:
                    rows = stage.add_records(counts, chunk_rows)
                stage.write(columns, out, not accountant.noise.is_secure, counts.missing_cells)
            except duckdb.IOException as err:  # e.g. a full disk: an OSError, which the
                raise os_error(err) from None  # caller's atomic_outputs says in one line
            except (duckdb.Error, pa.ArrowException) as err:  # its text could quote a value
                raise InputError(
                    f"the publication could not be written ({type(err).__name__}). Nothing "
                    "was published. Fix: check the input file, then publish again."
                ) from None
        finally:
            records.close()
    metadata = publication_metadata(
        plan,
        settings,
        accountant,
        sa=sa,
        columns=columns,
        rows_from=ROWS_FROM_SLOTS if columns == [sa] else ROWS_FROM_RECORDS,
        missing_policy=counts.missing_policy,
    )
    return FilePublication(metadata=metadata, release=plan, rows=rows)


class _Stage:
    """The staging table: one row per published row (shuffle key, sub-table, published value,
    declared columns)."""

    def __init__(self, records: FileRecords, plan: ReleasePlan, accountant: Accountant):
        import pyarrow as pa

        self.records = records
        self.con = records.con
        self.plan = plan
        self.accountant = accountant
        self.slots = Slots.of(plan.subtables)
        domains = self.slots.domains
        self.offsets = np.cumsum([0] + [len(d) for d in domains])[:-1]
        self.labels = pa.array([v for d in domains for v in d], pa.string())  # code -> label
        self.created = False

    def _append(self, group: np.ndarray, local: np.ndarray, others: dict) -> int:
        """Randomize the rows (sub-table `group`, starting code `local`) and stage them."""
        import pyarrow as pa

        published = PPRandomization.draw_partitioned(
            self.accountant, tuple(self.plan.mechanisms), group, local
        )
        n = group.size
        noise = self.accountant.noise  # the shuffle's keys: not a statistic (module doc)
        chunk = pa.table(
            {
                "key1": _key_bits(noise, n),
                "key2": _key_bits(noise, n),
                "sub": (group + 1).astype(np.int32),
                "sa": pa.DictionaryArray.from_arrays(
                    pa.array((self.offsets[group] + published).astype(np.int32)), self.labels
                ),
                **others,
            }
        )
        staged = f"(key1::HUGEINT << {KEY_BITS}) | key2::HUGEINT AS key, * EXCLUDE (key1, key2)"
        self.con.register("pp_chunk", chunk)
        try:
            if self.created:
                self.con.execute(f"INSERT INTO {STAGE} SELECT {staged} FROM pp_chunk")
            else:
                self.con.execute(f"CREATE TEMP TABLE {STAGE} AS SELECT {staged} FROM pp_chunk")
                self.created = True
        finally:
            self.con.unregister("pp_chunk")
        return n

    def add_slots(self, chunk_rows: int) -> int:
        """The SA-only publication: one row per planned slot, no record read."""
        ends = np.cumsum(self.slots.count)
        total = 0
        for start in range(0, self.slots.n_slots, chunk_rows):
            positions = np.arange(start, min(start + chunk_rows, self.slots.n_slots))
            run = np.searchsorted(ends, positions, side="right")
            total += self._append(self.slots.group[run], self.slots.local[run], {})
        return total

    def add_records(self, counts: FileCounts, chunk_rows: int) -> int:
        """One row per kept record, each drawn on its own from the plan (`assign`)."""
        import pyarrow.compute as pc

        planned = self.slots.codes_of(counts.labels)  # label -> planned value (-1: no slot)
        sa = self.records.sa
        others = [c for c in self.records.columns if c != sa]
        select = ", ".join(identifier(c) for c in self.records.columns)
        reader = (
            self.con.cursor().sql(f"SELECT {select} FROM {RECORDS}").to_arrow_reader(chunk_rows)
        )
        total = 0
        for batch in fixed_chunks(reader, chunk_rows):
            found = pc.index_in(batch.column(0), value_set=counts.values)
            if found.null_count:
                raise InputError(
                    "the input file changed while it was being published. Fix: publish again "
                    "once the file is complete."
                )
            label = counts.label_of_value[found.to_numpy(zero_copy_only=False)]
            kept = label >= 0
            if not kept.all():
                batch = batch.filter(kept)
                label = label[kept]
            group, local = draw_record_subtables(
                planned[label], self.slots, self.accountant, self.plan.mechanisms[0]
            )
            total += self._append(
                group, local, {f"c{i}": batch.column(i + 1) for i in range(len(others))}
            )
        return total

    def write(
        self, columns: list[str], out: str | Path, seeded: bool, missing_cells: dict[str, int]
    ) -> None:
        """Shuffle (ORDER BY the random key) and write the CSV to `out` in one DuckDB COPY."""
        if not self.created:  # nothing staged (cannot happen after a plan: kept for safety)
            raise InputError("there are no records to publish. Provide data rows.")
        sa = self.records.sa
        others = iter(range(len(columns)))
        select = []
        for column in column_spec(sa, columns, seeded):  # core.balancing.colspec
            name = identifier(column.name)
            if column.kind is Kind.MARKER:
                select.append(f"{literal(SEEDED_VALUE)} AS {name}")
            elif column.kind is Kind.SA:
                select.append(f"sa AS {name}")
            elif column.kind is Kind.SUBTABLE:
                select.append(f"sub AS {name}")
            else:  # declared: unchanged (DuckDB spells booleans true/false), missing labelled
                ref = f"c{next(others)}"
                if missing_cells.get(column.name):
                    ref = f"coalesce(CAST({ref} AS VARCHAR), {literal(MISSING_LABEL)})"
                select.append(f"{ref} AS {name}")
        query = f"SELECT {', '.join(select)} FROM {STAGE} ORDER BY key"
        self.con.execute(
            f"COPY ({query}) TO {literal(str(out))} (HEADER, DELIMITER ',', USE_TMP_FILE false)"
        )


def os_error(err: Exception) -> OSError:
    """DuckDB's I/O error as the OSError it reports (errno found by its text, else EIO)."""
    text = str(err)
    for code in (errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EFBIG):
        if os.strerror(code) in text:
            return OSError(code, os.strerror(code))
    return OSError(errno.EIO, text.splitlines()[0][:200] if text else "I/O error")


def _key_bits(noise, n: int) -> np.ndarray:
    """n independent uniform integers in [0, 2^KEY_BITS): 53-bit uniform floats scaled."""
    return (noise.uniform(n) * float(1 << KEY_BITS)).astype(np.int64)


def fixed_chunks(reader, rows: int) -> Iterator:
    """The reader's record batches regrouped into tables of exactly `rows` rows (the last may
    be shorter), so a seeded run draws the same numbers whatever batch sizes DuckDB yields."""
    import pyarrow as pa

    pending, held = [], 0
    for batch in reader:
        pending.append(batch)
        held += batch.num_rows
        while held >= rows:
            table = pa.Table.from_batches(pending).combine_chunks()
            yield table.slice(0, rows)
            rest = table.slice(rows)
            pending = rest.to_batches() if rest.num_rows else []
            held = rest.num_rows
    if held:
        yield pa.Table.from_batches(pending).combine_chunks()
