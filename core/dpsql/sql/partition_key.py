"""The salted key that ranks a unit's partitions for C_u sampling: integer arithmetic that DuckDB
and Spark compute identically, with MD5 only once per distinct partition (issue 30).

The key of a (unit, partition) pair is a 63-bit non-negative BIGINT built from 32-bit words:

    unit words       u_lo, u_hi  an integer unit (declared INTEGER, i.e. BIGINT): its low and
                                 high 32 bits (uid & 0xFFFFFFFF, (uid >> 32) & 0xFFFFFFFF);
                                 any other type: the first two 32-bit words of the MD5 of the
                                 unit's canonical text with the salt (`sampling_key.canonical_text`)
    partition words  p_a, p_b    the first two 32-bit words of the MD5 of the partition keys'
                                 canonical text with the salt, computed once per distinct
                                 partition in a small stage (`part_keys`) and joined back
    x = mix(mix(u_lo ^ s0) ^ u_hi ^ s1)                  per unit
    a = mix(x ^ p_a),  b = mix(x ^ s2 ^ p_b)
    key = (a << 31) | (b >> 1)

`mix` is a 32-bit bijection ("x ^= x >> 16; x = (x * 0x45d9f3b) mod 2^32", twice, then a last
xor-shift) and s0..s2 are 32-bit words derived from the secret salt. Every intermediate value
stays below 2^63, so there is no overflow, and each step is its own level of projection
(`layered`), so the SQL text grows linearly: DuckDB (which refuses to overflow) and Spark (which
wraps) compute the same integers, and `reference_key` computes them in Python. A MD5 word is
read from the first 8 hex digits of the digest, which both engines print alike (DuckDB
`CAST('0x' || SUBSTRING(MD5(t), 1, 8) AS BIGINT)`, Spark `CONV(..., 16, 10)`: `spark_word`).

Why it is cheaper: the MD5 of a length-prefixed text per (unit, partition) pair, with the unit
cast to text, was the largest single cost of C_u sampling (docs/benchmarks/dpsql.md); here the
only per-pair work is a dozen integer operations, and MD5 runs once per distinct partition.

Uniformity (what the sample looks like; never the privacy guarantee): for a fixed unit, `x` is
fixed and `mix` is a bijection, so two partitions' keys tie only when both 32-bit MD5 words of
their canonical texts collide (about 2^-64 per pair of partitions); for a fresh salt the
partition words are fresh pseudo-random words, so the unit's ranking of its partitions is a
uniformly random order and its first C_u partitions a uniformly random subset
(tests/dpsql/test_partition_key.py measures it).

Privacy: the key decides only which of a unit's own partitions it keeps; any choice of at most
C_u of them bounds the unit's influence (`core.dpsql.sql.sampling`). The salt, drawn from
`Noise` for every release, is never shown to the analyst, so the choice is a fresh random one.
"""

from __future__ import annotations

import hashlib

from sqlglot import exp

from core.dpsql.sql.sampling_key import canonical_text, reference_canonical

MASK = 0xFFFFFFFF
MULTIPLIER = 0x45D9F3B  # odd and below 2^31: a 32-bit word times it stays below 2^63
WORDS = ("_pa", "_pb")  # the partition words' columns in `part_keys`
HEX_PREFIX = "0x"


def salt_words(salt: int) -> tuple[int, int, int]:
    """s0, s1, s2: three 32-bit words of the salt's SHA-256 (secret as the salt is)."""
    digest = hashlib.sha256(f"dpx-partition-key|{int(salt)}".encode()).digest()
    return tuple(int.from_bytes(digest[4 * i : 4 * i + 4], "big") for i in range(3))


# --- SQL -----------------------------------------------------------------------------------


def _num(value: int) -> exp.Expression:
    return exp.Literal.number(value)


def _xor(a: exp.Expression, b: exp.Expression) -> exp.Expression:
    return exp.BitwiseXor(this=a, expression=b)


def _shr(a: exp.Expression, bits: int) -> exp.Expression:
    return exp.Paren(this=exp.BitwiseRightShift(this=a, expression=_num(bits)))


def _mask(a: exp.Expression) -> exp.Expression:
    return exp.Paren(this=exp.BitwiseAnd(this=exp.Paren(this=a), expression=_num(MASK)))


Layer = list[tuple[str, exp.Expression]]  # columns computed from the previous level's


def _step(v: exp.Expression) -> exp.Expression:
    """((v ^ (v >> 16)) * MULTIPLIER) mod 2^32: one multiply round of `mix`."""
    return _mask(
        exp.Mul(this=exp.Paren(this=_xor(v, _shr(v.copy(), 16))), expression=_num(MULTIPLIER))
    )


def _final(v: exp.Expression) -> exp.Expression:
    return exp.Paren(this=_xor(v, _shr(v.copy(), 16)))


def _col(name: str) -> exp.Column:
    return exp.column(name)


def mix_layers(name: str, start: exp.Expression) -> list[Layer]:
    """`name` = mix(start) as three levels of projection, so that no expression is written out
    more than twice (a nested xor-shift would double the SQL text at every round)."""
    return [
        [(f"{name}_1", _step(start))],
        [(f"{name}_2", _step(_col(f"{name}_1")))],
        [(name, _final(_col(f"{name}_2")))],
    ]


def digest_word(text: exp.Expression, index: int) -> exp.Expression:
    """The `index`-th (0 or 1) 32-bit word of the hex digest `text` (an MD5 in SQL), its 8 hex
    digits read as an integer."""
    hex_digits = exp.Substring(this=text, start=_num(8 * index + 1), length=_num(8))
    return exp.Cast(
        this=exp.DPipe(this=exp.Literal.string(HEX_PREFIX), expression=hex_digits),
        to=exp.DataType.build("BIGINT"),
    )


def is_word(node: exp.Expression) -> bool:
    """Whether `node` is a `digest_word` (as parsed back from DuckDB's SQL text)."""
    return (
        isinstance(node, exp.Cast)
        and isinstance(node.this, exp.DPipe)
        and isinstance(node.this.this, exp.Literal)
        and node.this.this.this == HEX_PREFIX
        and isinstance(node.this.expression, exp.Substring)
    )


def spark_word(node: exp.Expression) -> exp.Expression:
    """Spark's form of a `digest_word`: CONV(hex digits, 16, 10) cast to BIGINT (Spark's cast
    of '0x…' text gives NULL)."""
    conv = exp.Anonymous(this="CONV", expressions=[node.this.expression.copy(), _num(16), _num(10)])
    return exp.Cast(this=conv, to=exp.DataType.build("BIGINT"))


def partition_words(keys: list[exp.Expression], salt: int) -> list[exp.Expression]:
    """p_a and p_b of the partition with these key columns (constants when there are none).
    Evaluated once per distinct partition, so the digest is simply computed twice."""
    if not keys:
        return [_num(0), _num(0)]
    text = exp.MD5(this=canonical_text(keys, salt))
    return [digest_word(text.copy(), 0), digest_word(text.copy(), 1)]


def unit_layers(uid: exp.Expression, integer: bool, salt: int) -> list[Layer]:
    """Levels of projection ending in `_x` = mix(mix(u_lo ^ s0) ^ u_hi ^ s1), the unit's
    word: from the bits of an integer unit, or from the MD5 words of any other unit's text."""
    s0, s1, _ = salt_words(salt)
    layers: list[Layer] = []
    if integer:
        lo, hi = _mask(uid.copy()), _mask(_shr(uid.copy(), 32))
    else:
        layers.append([("_ud", exp.MD5(this=canonical_text([uid], salt)))])
        lo, hi = digest_word(_col("_ud"), 0), digest_word(_col("_ud"), 1)
    layers.append([("_ulo", lo), ("_uhi", hi)])
    layers += mix_layers("_xu", _xor(_col("_ulo"), _num(s0)))
    layers += mix_layers("_x", _xor(_xor(_col("_xu"), _col("_uhi")), _num(s1)))
    return layers


def key_layers(pa: exp.Expression, pb: exp.Expression, salt: int) -> list[Layer]:
    """Levels ending in `_r` = (mix(_x ^ p_a) << 31) | (mix(_x ^ s2 ^ p_b) >> 1), the pair's
    63-bit key, from the unit's word `_x` and the partition's words."""
    _, _, s2 = salt_words(salt)
    a = mix_layers("_ka", _xor(_col("_x"), pa))
    b = mix_layers("_kb", _xor(_xor(_col("_x"), _num(s2)), pb))
    layers = [la + lb for la, lb in zip(a, b, strict=True)]
    high = exp.Paren(this=exp.BitwiseLeftShift(this=_col("_ka"), expression=_num(31)))
    layers.append(
        [("_r", exp.Paren(this=exp.BitwiseOr(this=high, expression=_shr(_col("_kb"), 1))))]
    )
    return layers


def layered(base: exp.Select, layers: list[Layer], keep: list[exp.Expression]) -> exp.Select:
    """SELECT keep FROM (... (SELECT *, <layer 1> FROM (base)) ...): each level of columns
    computed from the one below it."""
    select = base
    for i, layer in enumerate(layers):
        inner = exp.Subquery(this=select, alias=exp.TableAlias(this=exp.to_identifier(f"_l{i}")))
        select = exp.select("*", *[exp.alias_(e, n) for n, e in layer]).from_(inner)
    inner = exp.Subquery(this=select, alias=exp.TableAlias(this=exp.to_identifier("_l")))
    return exp.select(*keep).from_(inner)


# --- the same in Python (tests check both engines against it) ------------------------------


def _mix(x: int) -> int:
    for _ in range(2):
        x = ((x ^ (x >> 16)) * MULTIPLIER) & MASK
    return x ^ (x >> 16)


def _words(text: str) -> tuple[int, int]:
    digest = hashlib.md5(text.encode()).hexdigest()
    return int(digest[:8], 16), int(digest[8:16], 16)


def reference_unit_mix(unit: object, integer: bool, salt: int) -> int:
    s0, s1, _ = salt_words(salt)
    if integer:
        lo, hi = int(unit) & MASK, (int(unit) >> 32) & MASK
    else:
        lo, hi = _words(reference_canonical([unit], salt))
    return _mix(_mix(lo ^ s0) ^ hi ^ s1)


def reference_key(unit: object, keys: list[object], salt: int, integer: bool = True) -> int:
    """The key in Python, engine-independent: `unit` an int (integer units) or a value whose
    text is the engines' VARCHAR cast; `keys` the partition's key values (None is NULL)."""
    x = reference_unit_mix(unit, integer, salt)
    pa, pb = _words(reference_canonical(keys, salt)) if keys else (0, 0)
    _, _, s2 = salt_words(salt)
    a = _mix(x ^ pa)
    b = _mix(x ^ s2 ^ pb)
    return (a << 31) | (b >> 1)
