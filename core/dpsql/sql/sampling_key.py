"""The salted row sampling key, and the canonical text every salted key hashes, computed
identically by DuckDB and Spark.

Used for the per-row bounds (at most k rows per unit and partition for per-row aggregates, and
the rows per unit of private tables joined with each other, `row_caps`). The C_u partition key
is `core.dpsql.sql.partition_key` (issue 30): integer arithmetic per pair, MD5 once per
partition over `canonical_text` of its keys.

`hash()` differs between engines (DuckDB's own hash vs Spark's Murmur3), so the key is MD5 over
a canonical string: every part is cast to text and length-prefixed (NULL becomes `N`), parts are
joined by `|`, and the 64-bit salt from `Noise` is appended. Length prefixes make the canonical
string injective, so two different (unit, partition) pairs never tie unless MD5 collides.

The executed key is the digest as a 128-bit unsigned integer, its 16 bytes read little-endian
(DuckDB's `md5_number`, a UHUGEINT), not the 32-character hex text: the per-unit top-C_u choice
then carries a 16-byte integer instead of a string, which is cheaper in time and memory (issue
22). Spark has no such function; `spark_key` orders by the same number written as text: the
digest's bytes in reverse order, in hex, which compares byte-wise exactly as the integer does.
So ROW_NUMBER over the key picks the same rows on both engines for the same salt, and ties are
impossible short of a 128-bit MD5 collision (the same as with the hex key before).
`reference_key` is the engine-independent definition in Python (tests check both engines
against it).

Text casts agree across the engines for integers, strings, dates, timestamps, booleans and
decimals; DOUBLE values print alike in [1e-3, 1e7) but use different exponent notation outside
it, so rows keyed by such doubles may be sampled differently on Spark (still at most C_u / k per
unit: the choice affects bias, never the privacy guarantee).
"""

from __future__ import annotations

import hashlib

from sqlglot import exp

KEY_FUNCTION = "MD5_NUMBER"


def _text(e: exp.Expression) -> exp.Expression:
    return exp.Cast(this=e, to=exp.DataType.build("VARCHAR"))


def _part(e: exp.Expression) -> exp.Expression:
    """'<length>:<text>' or 'N' for NULL."""
    body = exp.DPipe(
        this=exp.DPipe(
            this=_text(exp.Length(this=_text(e.copy()))), expression=exp.Literal.string(":")
        ),
        expression=_text(e.copy()),
    )
    return exp.Case(
        ifs=[
            exp.If(this=exp.Is(this=e.copy(), expression=exp.Null()), true=exp.Literal.string("N"))
        ],
        default=body,
    )


def canonical_text(parts: list[exp.Expression], salt: int) -> exp.Expression:
    """part_1 || '|' || ... || '|' || salt (see module doc)."""
    text: exp.Expression = exp.Literal.string(str(int(salt)))
    for part in reversed(parts):
        text = exp.DPipe(
            this=_part(part), expression=exp.DPipe(this=exp.Literal.string("|"), expression=text)
        )
    return text


def sampling_key(parts: list[exp.Expression], salt: int) -> exp.Expression:
    """DuckDB's md5_number(canonical text): the digest as a little-endian 128-bit integer."""
    return exp.Anonymous(this=KEY_FUNCTION, expressions=[canonical_text(parts, salt)])


def is_key(node: exp.Expression) -> bool:
    """Whether `node` is a sampling key made by `sampling_key` (for the Spark translation)."""
    return isinstance(node, exp.Anonymous) and str(node.this).upper() == KEY_FUNCTION


def spark_key(key: exp.Expression) -> exp.Expression:
    """The Spark form of a `sampling_key` node: MD5's hex digest with its 16 bytes reversed,
    which orders (byte-wise, as Spark compares strings) exactly as DuckDB's integer does."""
    digest = exp.MD5(this=key.expressions[0].copy())
    pairs = [
        exp.Substring(
            this=digest.copy(), start=exp.Literal.number(2 * i + 1), length=exp.Literal.number(2)
        )
        for i in reversed(range(16))
    ]
    return exp.Concat(expressions=pairs)


def reference_canonical(parts: list[object], salt: int) -> str:
    """`canonical_text` in Python: parts are Python values whose text is what the engines'
    VARCHAR cast gives (ints, strings); None is NULL. Lengths count characters, as the
    engines' LENGTH does."""
    text = "|".join("N" if p is None else f"{len(str(p))}:{p}" for p in parts)
    return f"{text}|{int(salt)}"


def reference_key(parts: list[object], salt: int) -> int:
    """The key in Python, independent of any engine (see `reference_canonical`)."""
    digest = hashlib.md5(reference_canonical(parts, salt).encode()).digest()
    return int.from_bytes(digest, "little")
