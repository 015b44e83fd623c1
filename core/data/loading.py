"""Load CSV or Parquet tables from a path or uploaded bytes, with specific error messages."""

from __future__ import annotations

import codecs
import csv
import io
from pathlib import Path

import pandas as pd

from core.errors import InputError

MAX_UPLOAD_BYTES = 200 * 1024 * 1024  # Streamlit's default upload limit: "200 MB" = 200 MiB
MIB = 1024 * 1024  # the one unit of sizes shown to people (Streamlit's "MB" is a MiB)
CSV_CHUNK_ROWS = 1_000_000  # rows parsed at a time from a file (`_read_csv_chunks`)
SNIFF_BYTES = 64 * 1024  # the prefix read to tell binary or UTF-16 files before reading all

_PARQUET_MAGIC = b"PAR1"


def load_table(
    source: str | Path | bytes,
    name: str | None = None,
    max_bytes: int | None = None,
) -> pd.DataFrame:
    """Read a CSV or Parquet table; `name` (a file name) picks the format for raw bytes.

    `max_bytes`: uploaded bytes are limited to `MAX_UPLOAD_BYTES` (the page's upload limit)
    unless told otherwise; a file given by path (the CLI, a registered dataset) has no size
    limit but the machine's (issue 22), unless `max_bytes` is given.

    Raises `InputError` naming the problem: too large, empty, unreadable, or no columns.
    """
    if isinstance(source, (str, Path)):
        return _load_path(Path(source), name, max_bytes)
    data = bytes(source)
    label = name or "upload"
    limit = MAX_UPLOAD_BYTES if max_bytes is None else max_bytes
    if len(data) > limit:
        raise InputError(_too_large(label, len(data), limit))
    _refuse_by_prefix(data[:SNIFF_BYTES], label)

    if not data.strip():
        raise InputError(_empty(label))

    is_parquet = _is_parquet(data[:4], label)
    try:
        df = pd.read_parquet(io.BytesIO(data)) if is_parquet else _read_csv(data)
    except InputError:
        raise
    except Exception as exc:  # pandas/pyarrow raise many types for garbled input
        raise InputError(_unreadable(label, is_parquet, exc)) from exc
    return _checked_shape(df, label)


def _load_path(path: Path, name: str | None, max_bytes: int | None) -> pd.DataFrame:
    """A table from a file, read where it lies: CSV text is checked in bounded chunks (UTF-8,
    not blank) and then parsed from the file by pandas, so the file's bytes and its text are
    never held in memory whole (a 200 MB upload kept on disk, `ui.upload_store`)."""
    if not path.is_file():
        raise InputError(f"file not found: {path}. Check the path.")
    size = path.stat().st_size
    label = name or path.name
    if max_bytes is not None and size > max_bytes:
        raise InputError(_too_large(label, size, max_bytes))
    head, is_parquet = check_file(path, label)
    try:
        if is_parquet:
            df = pd.read_parquet(path)
        else:
            sample = head.decode("utf-8-sig", errors="ignore")
            df = _read_csv_chunks(path, _sniff_separator(sample))
    except Exception as exc:  # pandas/pyarrow raise many types for garbled input
        raise InputError(_unreadable(label, is_parquet, exc)) from exc
    return _checked_shape(df, label)


def check_file(path: Path, label: str) -> tuple[bytes, bool]:
    """Refuse (one line) a file that cannot be a table: UTF-16/32 or binary text from a bounded
    prefix, then, for CSV, text that is blank or not UTF-8 (read in 1 MiB chunks, never whole).
    Returns the prefix and whether the file is Parquet (left to its reader)."""
    with path.open("rb") as fh:  # a bounded prefix decides before the whole file is read
        head = fh.read(SNIFF_BYTES)
    _refuse_by_prefix(head, label)
    is_parquet = _is_parquet(head[:4], label)
    if not is_parquet:
        _check_utf8_text(path, label)
    return head, is_parquet


def _read_csv_chunks(path: Path, sep: str) -> pd.DataFrame:
    """The CSV file parsed in blocks of `CSV_CHUNK_ROWS` rows, concatenated: the parser's
    working memory is one block, not the whole file (measured on a 199 MiB CSV: peak 580 MiB
    over the frame's start instead of 760 MiB). A column's type is decided over the whole file,
    as in one read: a column whose blocks disagree (numbers in one, text in another) is read
    again as text."""
    blocks = list(pd.read_csv(path, sep=sep, chunksize=CSV_CHUNK_ROWS))
    if len(blocks) == 1:
        return blocks[0]
    kinds = [{str(b.dtypes.iloc[c]) for b in blocks} for c in range(blocks[0].shape[1])]
    if any(len(k - {"int64", "float64"}) > 0 and len(k) > 1 for k in kinds):
        # rare (numbers in one block, text in another): let one read decide every type
        del blocks
        return pd.read_csv(path, sep=sep)
    return pd.concat(blocks, ignore_index=True)


def _check_utf8_text(path: Path, label: str) -> None:
    """Refuse a file that is blank or not UTF-8, reading it in 1 MiB chunks (the same messages
    as for bytes)."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    blank, offset = True, 0
    with path.open("rb") as fh:
        while chunk := fh.read(MIB):
            try:
                decoder.decode(chunk)
                if blank and chunk.strip():
                    blank = False
            except UnicodeDecodeError as exc:
                raise InputError(_not_utf8(offset + exc.start)) from None
            offset += len(chunk)
        try:
            decoder.decode(b"", final=True)
        except UnicodeDecodeError as exc:
            raise InputError(_not_utf8(offset - len(exc.object) + exc.start)) from None
    if blank:
        raise InputError(_empty(label))


def _checked_shape(df: pd.DataFrame, label: str) -> pd.DataFrame:
    if df.shape[1] == 0:
        raise InputError(f"{label} has no columns: it needs a header row naming each column.")
    if len(df) == 0:
        raise InputError(f"{label} has a header but no data rows.")
    return df


def _empty(label: str) -> str:
    return f"{label} is empty: upload a CSV or Parquet file with a header row and data."


def _not_utf8(position: int) -> str:
    return (
        f"the file is not UTF-8 text (bad byte at position {position}). Save it as UTF-8 CSV "
        "and upload again."
    )


def _unreadable(label: str, is_parquet: bool, exc: Exception) -> str:
    kind = "Parquet" if is_parquet else "CSV"
    return (
        f"{label} could not be read as {kind} ({type(exc).__name__}: "
        f"{str(exc).splitlines()[0][:160] if str(exc) else ''}). "
        "Upload a comma-separated text file with a header row, or a Parquet file."
    )


def _is_parquet(head: bytes, label: str) -> bool:
    return head[:4] == _PARQUET_MAGIC or label.lower().endswith((".parquet", ".pq"))


def refuse_non_text(path: Path) -> None:
    """For readers that open a file in place (DuckDB): refuse a CSV that is UTF-16/32 or binary
    from its first `SNIFF_BYTES` bytes, with the same one line as loading it would give."""
    with open(path, "rb") as fh:
        head = fh.read(SNIFF_BYTES)
    _refuse_by_prefix(head, Path(path).name)


def _refuse_by_prefix(head: bytes, label: str) -> None:
    """Refuse a file that cannot be CSV text from its first `SNIFF_BYTES` bytes: UTF-16/32 text
    (said so: a re-save fixes it) or binary (NUL bytes). Parquet is left to its reader."""
    if _is_parquet(head, label):
        return
    encoding = _utf16_or_32(head)
    if encoding is not None:
        raise InputError(
            f"{label}: the file is {encoding} text; save it as UTF-8. Fix: re-save it with the "
            "UTF-8 encoding (e.g. 'CSV UTF-8' in Excel) and try again."
        )
    if b"\x00" in head[:4096]:
        raise InputError(
            f"{label}: the file looks binary, not like CSV text (it contains NUL bytes). Fix: "
            "give a comma-separated text file with a header row, or a Parquet file."
        )


def _utf16_or_32(head: bytes) -> str | None:
    """The encoding's name, "UTF-16" or "UTF-32", when `head` starts with that byte-order mark, or (no mark) when it is
    mostly ASCII characters each followed or preceded by NUL bytes; else None."""
    if head.startswith((b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")):
        return "UTF-32"
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "UTF-16"
    sample = head[:4096]
    if len(sample) < 4 or b"\x00" not in sample:
        return None
    pairs = len(sample) // 2
    even, odd = sample[0 : 2 * pairs : 2], sample[1 : 2 * pairs : 2]
    for text, nuls in ((even, odd), (odd, even)):
        printable = sum(32 <= b < 127 or b in (9, 10, 13) for b in text)
        if nuls.count(0) >= 0.9 * pairs and printable >= 0.9 * pairs:
            return "UTF-16"
    return None


def _read_csv(data: bytes) -> pd.DataFrame:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(_not_utf8(exc.start)) from exc
    return pd.read_csv(io.StringIO(text), sep=_sniff_separator(text))


def _sniff_separator(text: str) -> str:
    """The field separator among , ; tab | — a comma when the sample does not decide."""
    try:
        return csv.Sniffer().sniff(text[:65536], delimiters=",;\t|").delimiter
    except csv.Error:  # e.g. a single-column file
        return ","


def too_large(label: str, size: int, limit: int) -> str:
    """The one-line refusal of a file over `limit` bytes (sizes in the uploader's unit)."""
    return _too_large(label, size, limit)


def _too_large(label: str, size: int, limit: int) -> str:
    return (
        f"{label} is {size / MIB:.1f} MB, over the {limit / MIB:.0f} MB limit (1 MB = 1024 x "
        "1024 bytes, as the uploader counts). "
        "Upload a smaller file (e.g. a sample, or Parquet instead of CSV)."
    )
