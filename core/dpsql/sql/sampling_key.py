"""The salted partition/row sampling key, computed identically by DuckDB and Spark.

`hash()` differs between engines (DuckDB's own hash vs Spark's Murmur3), so the executed key is
MD5 over a canonical string: every part is cast to text and length-prefixed (NULL becomes `N`),
parts are joined by `|`, and the 64-bit salt from `Noise` is appended. The 32-character hex
digest orders the same way in both engines (byte-wise string comparison), so ROW_NUMBER over it
picks the same rows for the same salt. Length prefixes make the canonical string injective, so
two different (unit, partition) pairs never tie unless MD5 collides.

Text casts agree across the engines for integers, strings, dates, timestamps, booleans and
decimals; DOUBLE values print alike in [1e-3, 1e7) but use different exponent notation outside
it, so rows keyed by such doubles may be sampled differently on Spark (still at most C_u / k per
unit: the choice affects bias, never the privacy guarantee).
"""

from __future__ import annotations

from sqlglot import exp


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


def sampling_key(parts: list[exp.Expression], salt: int) -> exp.Expression:
    """MD5(part_1 || '|' || ... || '|' || salt) as a 32-hex-digit string (see module doc)."""
    text: exp.Expression = exp.Literal.string(str(int(salt)))
    for part in reversed(parts):
        text = exp.DPipe(
            this=_part(part), expression=exp.DPipe(this=exp.Literal.string("|"), expression=text)
        )
    return exp.MD5(this=text)
