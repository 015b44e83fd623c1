"""PP balancing end to end — THE entry point the CLI and the page import (issue 28).

One shape, as for DP SQL (`core.dpsql.service`): a frozen, typed `PPParams` (what a person asked
for, built once at each front door: `core.cli.balance.pp_params` from argv, `ui.pp.params`
from the page's widgets) -> `prepare(params, source)` -> `PPPrepared` (every check that needs no
private data, the privacy unit as a `core.privacy.PrivacyUnit`, the mechanisms that will be
charged and their composed cost, the claim) -> the caller charges `prepared.cost` through
`core.governance.pp.pp_request` + `govern` -> `run(prepared, accountant)` publishes.

What `prepare` reads: the table's header (file header or footer, or the page's frame's column
names) and the registered dataset's declared facts (unit column, publishable columns, the
SA's declared categories). No record. The one check that may read data — the owner's "does
the SA have missing values?" (`core.balancing.precharge`) — is `PPPrepared.missing_check`, run
by the governed flow before the charge; for an analyst it reads nothing.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from fractions import Fraction
from pathlib import Path

import pandas as pd

from core.balancing.columns import check_requested, published_columns
from core.balancing.names import SUBTABLE_COLUMN, published_name
from core.balancing.params import parse_rho
from core.balancing.persons import pp_unit_words
from core.balancing.precharge import count_missing_in_file, missing_policy
from core.balancing.publish import Publication, publish
from core.balancing.records import MISSING_POLICIES, MissingPolicy
from core.balancing.release import (
    DEFAULT_PLAN_EPSILON,
    ReleasePlan,
    ReleaseSettings,
)
from core.data.declared import TableSchema
from core.errors import InputError
from core.privacy import Accountant, Cost, Mechanism, PrivacyUnit, RhoClaim, UnitKind
from core.registry import Claim, Dataset

ENGINES = ("pandas", "spark")


class CategoriesFrom:
    """Where a publication's SA categories come from (said in the output of both doors)."""

    GIVEN = "declared by you"  # --categories / the page's field
    SCHEMA = "the dataset's declared schema"  # ColumnFact.categories of the SA column
    DATA = "read from the data above a noisy threshold"  # delta > 0


@dataclass(frozen=True)
class PPParams:
    """What a person asked of a PP publication (public parameters only, no data).

    `columns`: the columns asked for beside the SA (on a registered dataset: among the ones its
    owner declared publishable; on files given directly the owner declares them here).
    `categories`: the SA's possible values, declared public (None: the dataset's declared
    schema's, else read from the data above a noisy threshold, delta > 0)."""

    sa: str
    rho1: Fraction
    rho2: Fraction
    categories: tuple[str, ...] | None = None
    missing: MissingPolicy = "error"
    columns: tuple[str, ...] = ()
    plan_epsilon: float = DEFAULT_PLAN_EPSILON
    tie_policy: str = "stable"
    merge_policy: str = "none"
    accept_fallback: bool = False
    perturb: bool = True
    engine: str = "pandas"

    def __post_init__(self):
        if not isinstance(self.sa, str) or not self.sa:
            raise InputError("name the sensitive attribute column with --sa COL.")
        object.__setattr__(self, "rho1", _exact(self.rho1, "rho1"))
        object.__setattr__(self, "rho2", _exact(self.rho2, "rho2"))
        object.__setattr__(self, "columns", tuple(str(c) for c in self.columns))
        if self.categories is not None:
            object.__setattr__(self, "categories", tuple(str(c) for c in self.categories))
        if self.missing not in MISSING_POLICIES:
            raise InputError(
                f"unknown missing-value policy {self.missing!r}: use drop or category."
            )
        if self.engine not in ENGINES:
            raise InputError(f"unknown engine {self.engine!r}: use pandas or spark.")

    def settings(self, categories: tuple[str, ...] | None) -> ReleaseSettings:
        """The release's public settings (validated: ρ, ε, policies, categories)."""
        return ReleaseSettings(
            self.rho1, self.rho2, plan_epsilon=self.plan_epsilon, tie_policy=self.tie_policy,
            merge_policy=self.merge_policy, missing=self.missing,
            accept_fallback=self.accept_fallback, categories=categories,
        )  # fmt: skip

    def to_json(self) -> dict:
        """The parameters as the registry records them (exact fractions as "a/b")."""
        out = asdict(self)
        out["rho1"], out["rho2"] = str(self.rho1), str(self.rho2)
        out["columns"] = list(self.columns)
        out["categories"] = None if self.categories is None else list(self.categories)
        return out


def _exact(value, name: str) -> Fraction:
    """ρ as an exact fraction: a Fraction or int as is, a text ("1/3", "0.3") parsed, a float
    by its shortest decimal (0.3 -> 3/10, never its binary expansion)."""
    if isinstance(value, str):
        return parse_rho(value, name)
    if isinstance(value, float):
        return Fraction(repr(value))
    return Fraction(value)


@dataclass(frozen=True)
class PPSource:
    """The table a publication is made of: a file (the CLI) or a frame in memory (the page),
    its header (public), and the registered dataset it belongs to (None: the owner's files)."""

    header: tuple[str, ...]
    dataset: Dataset | None = None
    path: Path | None = None
    frame: pd.DataFrame | None = field(default=None, compare=False, repr=False)
    table: str | None = None  # the registered table's name (for its declared schema)

    @property
    def schema(self) -> TableSchema | None:
        """The registered table's declared schema (None: the owner's own file or frame, or a
        table registered before schemas were stored)."""
        if self.dataset is None or self.table is None:
            return None
        return self.dataset.schema(self.table)

    @classmethod
    def of_file(cls, path: str | Path, dataset: Dataset | None = None) -> PPSource:
        from core.data.schema import columns_of

        return cls(tuple(columns_of(path)), dataset, Path(path), None, _table_name(dataset))

    @classmethod
    def of_frame(cls, frame: pd.DataFrame, dataset: Dataset | None = None) -> PPSource:
        header = tuple(str(c) for c in frame.columns)
        return cls(header, dataset, None, frame, _table_name(dataset))


def _table_name(dataset: Dataset | None) -> str | None:
    if dataset is None:
        return None
    private = dataset.private_tables
    if len(private) != 1:
        raise InputError(
            f"PP reads one table, but dataset '{dataset.name}' has {len(private)} private "
            "tables. Fix: register the table as its own dataset."
        )
    return private[0].name


@dataclass(frozen=True)
class PPPrepared:
    """A checked PP publication; nothing has been read or charged.

    `mechanisms`: the `core.privacy` objects the release charges before reading data (discrete
    Laplace on the value counts and, without declared categories, the noisy threshold that
    selects the listed values); `cost` is their composition; `rho` the (ρ1, ρ2) claim of the
    per-record randomization (one `PPRandomization` per sub-table, drawn after the plan)."""

    params: PPParams
    settings: ReleaseSettings
    unit: PrivacyUnit
    columns: tuple[str, ...]  # published input columns: the SA and the others, table order
    categories_from: str  # a CategoriesFrom text
    source: PPSource = field(compare=False, repr=False)

    @property
    def mechanisms(self) -> tuple[Mechanism, ...]:
        return tuple(self.settings.charged_mechanisms)

    @property
    def cost(self) -> Cost:
        """(ε, δ) of the release: the composition (sum) of `mechanisms`' costs."""
        return Cost.of(self.mechanisms)

    @property
    def rho(self) -> RhoClaim:
        return self.settings.claim

    @property
    def unit_column(self) -> str | None:
        """The person column (one record per person is kept, never published), if any."""
        return self.unit.column if self.unit.kind is UnitKind.PERSON else None

    @property
    def claim(self) -> Claim:
        """(ρ1, ρ2) per record + the plan's (ε, δ), protecting `unit` in PP's words."""
        return Claim(
            pp_unit_words(self.unit), self.unit_column, str(self.rho.rho1), str(self.rho.rho2)
        )

    @property
    def published_header(self) -> tuple[str, ...]:
        return (*self.columns, SUBTABLE_COLUMN)

    def missing_check(self, analyst: bool):
        """The missing-value rule of `core.balancing.precharge`, as a check the governed flow
        runs before the charge: an analyst must have declared drop/category (nothing read);
        the owner is asked only when the SA has missing values (reads that one column)."""
        source = self.source

        def count() -> int:
            if source.frame is not None:
                return int(source.frame[self.params.sa].isna().sum())
            return count_missing_in_file(source.path, self.params.sa)

        def check() -> None:
            missing_policy(self.params.missing, analyst=analyst, sa=self.params.sa,
                           count_missing=count)  # fmt: skip

        return check


def declared_categories(dataset: Dataset | None, sa: str) -> tuple[str, ...] | None:
    """The SA's categories as the dataset's owner declared them in its schema, or None."""
    if dataset is None or len(dataset.private_tables) != 1:
        return None
    schema = dataset.schema(dataset.private_tables[0].name)
    fact = None if schema is None else schema.column(sa)
    return None if fact is None or fact.categories is None else tuple(fact.categories)


def prepare(params: PPParams, source: PPSource) -> PPPrepared:
    """Every check of a PP publication that needs no private data, in order: the settings (ρ,
    ε, policies, declared categories), the SA and the unit column are columns of the header,
    the SA is not the unit column, the published columns are ones the owner may publish, the
    Spark engine is not asked for a person column. Reads the header only; raises InputError.

    Categories: `params.categories`, else the dataset's declared schema's for the SA (public),
    else none (read from the data above a noisy threshold: the cost has δ > 0)."""
    if not params.perturb:
        raise InputError("prepare() makes a publication: the exact plan is the owner's view.")
    dataset = source.dataset
    categories, came_from = params.categories, CategoriesFrom.GIVEN
    if categories is None:
        categories = declared_categories(dataset, params.sa)
        came_from = CategoriesFrom.DATA if categories is None else CategoriesFrom.SCHEMA
    settings = params.settings(categories)
    unit = PrivacyUnit.record() if dataset is None else dataset.unit
    person = unit.column if unit.kind is UnitKind.PERSON else None
    header = list(source.header)
    named = {"sensitive attribute": params.sa, "person": person}
    for role, name in named.items():
        if name is not None and name not in header:
            raise InputError(
                f"{role} column '{name}' is not in the table (columns: {', '.join(header)}). "
                "Nothing was charged."
            )
    if person is not None and params.sa == person:
        raise InputError(
            f"'{params.sa}' is the privacy-unit column (it identifies the person): it cannot be "
            "the sensitive attribute. Nothing was charged."
        )
    if dataset is None:  # files given directly: the owner declares the columns here
        columns = published_columns(header, params.sa, person, list(params.columns))
    else:
        check_requested(params.sa, dataset.publishable, params.columns)
        columns = published_columns(
            header, params.sa, person, list(dataset.publishable), [params.sa, *params.columns]
        )
    if person is not None and params.engine == "spark":
        raise InputError(
            f"dataset '{dataset.name}' has a person column ({person}): PP keeps one record per "
            "person, which the Spark engine does not do yet. Fix: drop --engine spark."
        )
    return PPPrepared(params, settings, unit, tuple(columns), came_from, source)


@dataclass(frozen=True)
class FileOutcome:
    """A publication written to files: the CSV, its metadata, and what they hold."""

    out: Path
    metadata_path: Path
    metadata: dict
    release: ReleasePlan
    rows: int


def run(prepared: PPPrepared, accountant: Accountant) -> Publication:
    """Publish the source's frame (or its file, loaded) in memory. Charges nothing: the caller
    has charged `prepared.cost` and passes `Accountant(noise, budget=prepared.cost, rho=...)`.

    Privacy claim: (ρ1, ρ2) per record (one `PPRandomization` per sub-table) and (ε, δ) =
    `prepared.cost` for the partition plan (discrete Laplace of scale 2/ε on the value counts,
    sensitivity 2; δ the noisy threshold's when categories are not declared), at the level of
    `prepared.unit` (a person column keeps one record per person)."""
    accountant.require(prepared.cost, "this publication")
    return publish(
        _frame(prepared), prepared.params.sa, list(prepared.columns), prepared.settings,
        accountant, unit=prepared.unit_column,
    )  # fmt: skip


def _frame(prepared: PPPrepared) -> pd.DataFrame:
    source = prepared.source
    if source.frame is not None:
        return source.frame
    from core import cliargs
    from core.data.loading import load_table
    from core.data.validation import require_column

    if source.schema is not None:  # a registered table: read as declared, never inferred
        from core.data.relation import load_declared

        df = load_declared(source.path, source.schema)
    else:
        df = load_table(source.path)
    require_column(df, prepared.params.sa, "sensitive attribute column")
    cliargs.refuse_nested_columns(df, [prepared.params.sa])
    return df


def metadata_path(out: Path) -> Path:
    return out.with_name(out.stem + ".metadata.json")


def run_to_file(
    prepared: PPPrepared, accountant: Accountant, out: str | Path, spark_master: str | None = None
) -> FileOutcome:
    """Publish to `out` (a seeded publication says so in its name) and its metadata beside it,
    together or not at all (`core.files.atomic_outputs`), on the path that fits the source: on
    Spark (`--engine spark`), streamed by DuckDB from the file where it lies (no person
    column), else in memory. Charges nothing; the privacy claim is `run`'s."""
    from core.files import atomic_outputs

    accountant.require(prepared.cost, "this publication")
    out = published_name(out, accountant.noise)
    meta = metadata_path(out)
    source, params = prepared.source, prepared.params
    if params.engine == "spark":
        return _spark(prepared, accountant, out, meta, spark_master)
    if prepared.unit_column is None and source.frame is None:
        streamed = _streamed(prepared, accountant, out, meta)
        if streamed is not None:
            return streamed
    pub = run(prepared, accountant)
    with atomic_outputs(out, meta, make_parents=True) as (table_file, meta_file):
        pub.write_csv(table_file.temp)  # in bulk: the bytes pub.csv() holds
        meta_file.write_text(json.dumps(pub.metadata, indent=2))
    return FileOutcome(out, meta, pub.metadata, pub.release, len(pub.table))


def _streamed(prepared, accountant, out: Path, meta: Path) -> FileOutcome | None:
    """The publication of a Parquet/CSV file read where it lies (`publish_file`), or None when
    DuckDB cannot read the file (nothing drawn yet: the caller loads it)."""
    from core.balancing.stream_publish import publish_file
    from core.files import atomic_outputs
    from core.spatial.scan import ScanUnavailable

    try:
        with atomic_outputs(out, meta, make_parents=True) as (table_file, meta_file):
            filed = publish_file(
                prepared.source.path, prepared.params.sa, list(prepared.columns),
                prepared.settings, accountant, table_file.temp, schema=prepared.source.schema,
            )  # fmt: skip
            meta_file.write_text(json.dumps(filed.metadata, indent=2))
    except ScanUnavailable:
        return None
    return FileOutcome(out, meta, filed.metadata, filed.release, filed.rows)


def spark_counts(path, sa: str, missing: str, master: str | None):
    """The SA value counts from a Spark pass (issue 11) and the Spark table they came from;
    only counts reach the driver."""
    from core.balancing.spark_pass import count_values, read_table
    from core.sparkutil import spark_failure, spark_session

    session = spark_session(master)
    try:
        frame = read_table(session, path)
        return count_values(frame, sa, missing=missing), frame
    except InputError:
        raise
    except Exception as err:  # noqa: BLE001 - a Spark read/analysis failure: one line
        raise spark_failure(f"count the values of {path}", err) from None


def _spark(prepared, accountant, out: Path, meta: Path, master) -> FileOutcome:
    """On Spark: records assigned and perturbed on the executors with draws derived from a
    secret key drawn under the release's mechanisms (`core.balancing.spark_publish`). A
    registered table is first read into its declared schema by DuckDB (`write_declared`), so
    Spark sees the declared types, never its own inference."""
    from core.data.relation import write_declared
    from core.files import work_directory

    params = prepared.params
    with work_directory("dpx-spark-") as work:
        path = prepared.source.path
        if prepared.source.schema is not None:  # Spark reads DuckDB's declared conversion
            path = write_declared(path, prepared.source.schema, Path(work) / "declared.parquet")
        counts, frame = spark_counts(path, params.sa, params.missing, master)
        return _spark_publish(prepared, accountant, out, meta, counts, frame)


def _spark_publish(prepared, accountant, out: Path, meta: Path, counts, frame) -> FileOutcome:
    from core.balancing.spark_publish import publish_spark
    from core.files import atomic_outputs
    from core.sparkutil import spark_failure

    params = prepared.params
    with atomic_outputs(out, meta, make_parents=True) as (table_file, meta_file):
        try:
            metadata, plan = publish_spark(
                frame.sparkSession, frame, params.sa, counts, list(prepared.columns),
                prepared.settings, accountant, table_file.temp,
            )  # fmt: skip
        except InputError:
            raise
        except Exception as err:  # noqa: BLE001 - a Spark failure: one line, no partial file
            raise spark_failure(f"publish the perturbed table to {out}", err) from None
        meta_file.write_text(json.dumps(metadata, indent=2))
    return FileOutcome(out, meta, metadata, plan, int(metadata.get("rows_published", 0)))
