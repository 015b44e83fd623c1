"""The checks of a PP publication that come before the charge (issue 28), shared by
`dpx balance --perturb` and the PP page, so that both ask the same questions at the same time.

Missing values of the sensitive attribute. Whether the SA has a missing value is a private
fact: one record decides it. A rule that looked at the data to decide whether to ask would
publish one table and refuse its neighbour (the same table with one SA value blanked) — the
refusal tells who sees it that such a record exists — and, made after the charge, it spends ε
on nothing (issue 28: three tries, ε 3 spent on three failed releases). So:

* an analyst must say up front what happens to missing values (`drop` those records, or count
  them as a `category` of their own), whatever the data holds: the page always asks, and the
  CLI refuses `--perturb` without `--missing drop|category`, before anything is charged and
  identically on neighbouring tables. A declared default was the alternative; it was not
  chosen because the two policies publish different tables (with or without a '(missing)'
  category) and the page asks rather than guesses;
* the data owner, who may see their own data, is asked only when the SA has missing values
  (`count_missing` reads that one column): the refusal may depend on the data because nobody
  else sees it, and it too comes before the charge, so nothing is spent on it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from core.balancing.records import MISSING_POLICIES, MissingPolicy
from core.errors import InputError

DECLARED_POLICIES = ("drop", "category")


def must_declare_missing(analyst: bool, count_missing: Callable[[], int]) -> bool:
    """Whether the person must choose a missing-value policy before anything is charged: an
    analyst always (no look at the data), the owner when the SA has a missing value."""
    return analyst or count_missing() > 0


def missing_policy(
    declared: str, *, analyst: bool, sa: str, count_missing: Callable[[], int]
) -> MissingPolicy:
    """The publication's missing-value policy, or InputError (one line) before the charge.

    `declared` is the CLI's `--missing` ("error", its default, means none was chosen).
    Privacy: for an analyst the outcome depends on `declared` only (module docstring)."""
    if declared not in MISSING_POLICIES:
        raise InputError(f"unknown missing-value policy {declared!r}: use drop or category.")
    if declared in DECLARED_POLICIES:
        return declared  # type: ignore[return-value]
    if analyst:
        raise InputError(
            f"say what happens to missing values of '{sa}' before anything is charged (whether "
            "it has any is private, so it is always asked). Nothing was charged. Fix: add "
            "--missing drop (leave those records out) or --missing category (publish them as "
            "a category of their own)."
        )
    n_missing = count_missing()
    if n_missing:
        raise InputError(
            f"the sensitive attribute '{sa}' has {n_missing} missing value(s) (you see this as "
            "the data owner). Nothing was charged. Fix: add --missing drop (leave those "
            "records out) or --missing category (publish them as a category of their own)."
        )
    return "error"


def count_missing_in_file(path: str | Path, sa: str) -> int:
    """The number of missing SA values in the file at `path` (the owner's check), counted by
    DuckDB where the file lies, as the publication reads it (NaN in a float column and the CSV
    spellings of 'missing' count); a file DuckDB cannot read is loaded as the publication
    would load it."""
    from core.balancing.file_scan import RECORDS, open_records
    from core.dpsql.execute.scan import identifier
    from core.files import work_directory
    from core.spatial.scan import ScanUnavailable

    try:
        with work_directory("dpx-pp-") as work:
            records = open_records(path, sa, (), work)
            try:
                (n,) = records.con.execute(
                    f"SELECT count(*) FROM {RECORDS} WHERE {identifier(sa)} IS NULL"
                ).fetchone()
            finally:
                records.close()
            return int(n)
    except ScanUnavailable:
        from core.data.loading import load_table
        from core.data.validation import require_column

        df = load_table(path)
        require_column(df, sa, "sensitive attribute column")
        return int(df[sa].isna().sum())
