"""DPX-V041: the size of every value a query computes is bounded from the declared schema before
any data is read (core.dpsql.check.growth).

The attack (issue 27, item 3): REPLACE(s, 'a', s) nested three times squares a string's length
each time, and IF(uid = 7, 'aaaaaaaaaa', 'b') makes only the target's row grow (to 10^8
characters), so the engine runs out of memory exactly when the target is present. The pass must
refuse it before the charge, the same way on both neighbours; accept modest string work; take
widths from the declared schema; and never under-estimate what DuckDB actually computes.
"""

from __future__ import annotations

import duckdb
import pandas as pd
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from sqlglot import exp

from core.data.declared import ColumnFact, ColumnType, TableSchema
from core.dpsql.catalog import Catalog
from core.dpsql.check.growth import MAX_VALUE_CHARACTERS, Bounder, check_growth
from core.dpsql.check.passes import Checking, run_checks, unit_lineage, value_sizes
from core.dpsql.parse.dialect import parse_statements
from core.dpsql.service import prepare
from core.errors import InputError
from core.privacy import Noise

DP = "SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1, delta = 1e-5, max_groups_contributed = 1)"
TARGET = "IF(uid = 7, 'aaaaaaaaaa', 'b')"


def _nested(levels: int, base: str = TARGET) -> str:
    """`levels` derived tables, each squaring the length of the one below: REPLACE(t, 'a', t)."""
    inner = f"(SELECT uid, {base} AS t0 FROM People) d0"
    for k in range(1, levels + 1):
        inner = f"(SELECT uid, REPLACE(t{k - 1}, 'a', t{k - 1}) AS t{k} FROM {inner}) d{k}"
    return f"{DP} ANON_COUNT(*, 1) AS c FROM {inner} WHERE LENGTH(d{levels}.t{levels}) > 5"


ATTACK = _nested(3)
ATTACK_ONE_EXPRESSION = (  # the same growth written inline: s, then r1 = REPLACE(s, 'a', s), ...
    f"{DP} ANON_COUNT(*, 1) AS c FROM People WHERE LENGTH(REPLACE("
    f"REPLACE(REPLACE({TARGET}, 'a', {TARGET}), 'a', REPLACE({TARGET}, 'a', {TARGET})), 'a', "
    f"REPLACE(REPLACE({TARGET}, 'a', {TARGET}), 'a', REPLACE({TARGET}, 'a', {TARGET})))) > 5"
)


def _schema(name_length: int) -> TableSchema:
    return TableSchema(
        columns=(
            ColumnFact("uid", ColumnType.INTEGER, nullable=False),
            ColumnFact("name", ColumnType.TEXT, max_length=name_length),
            ColumnFact("age", ColumnType.INTEGER, bounds=(0, 120)),
        ),
        max_rows=1000,
    )


def declare(catalog: Catalog, name: str, frame: pd.DataFrame, uid: str, schema: TableSchema):
    """Register a private table with its declared schema (what the pass reads:
    `core.dpsql.check.growth.column_widths`)."""
    return catalog.add_private(name, frame, uid, declared=schema)


def _people(with_target: bool) -> pd.DataFrame:
    uids = [u for u in range(1, 21) if with_target or u != 7]
    return pd.DataFrame(
        {"uid": uids, "name": [f"n{u}" for u in uids], "age": [20 + u for u in uids]}
    )


def _catalog(with_target: bool = True, name_length: int = 64) -> Catalog:
    catalog = Catalog()
    declare(catalog, "People", _people(with_target), "uid", _schema(name_length))
    return catalog


def _checked(sql: str, catalog: Catalog, upto=value_sizes) -> Checking:
    return run_checks(Checking(sql, catalog, {}, parse_statements(sql)), upto=upto)


def _refusal(sql: str, catalog: Catalog) -> str:
    with pytest.raises(InputError) as err:
        prepare(sql, catalog, Noise.seeded(0))
    return str(err.value)


# -- the attack ---------------------------------------------------------------------------------
@pytest.mark.parametrize("sql", [ATTACK, ATTACK_ONE_EXPRESSION], ids=["derived", "inline"])
def test_the_squaring_attack_is_refused_before_the_charge_the_same_on_both_neighbours(sql):
    # `prepare` reads no data and the governed flow charges only a Prepared: a refusal here is
    # before the charge. Both neighbours (the target's row present or not) get the same message.
    with_target = _refusal(sql, _catalog(with_target=True))
    without_target = _refusal(sql, _catalog(with_target=False))
    assert with_target == without_target
    assert with_target.startswith("DPX-V041 ")
    assert "\n" not in with_target and "Fix: " in with_target
    assert f"{MAX_VALUE_CHARACTERS:,} characters per value" in with_target
    assert "100,000,000 characters" in with_target  # 10 -> 100 -> 10^4 -> 10^8: the exact bound


def test_the_refusal_names_the_expression_and_the_declared_column():
    message = _refusal(_nested(3, base="name"), _catalog(name_length=64))
    assert "`REPLACE(t1, 'a', t1)` can be up to 16,777,216 characters" in message
    assert "max length for People.name (" in message
    assert "LEFT(s, n)" in message and "`dpx dataset schema`" in message


# -- modest work is accepted ---------------------------------------------------------------------
def test_modest_replace_and_concat_are_accepted_with_their_bound_recorded():
    sql = (
        f"{DP} ANON_COUNT(*, 1) AS c FROM People WHERE LENGTH(REPLACE(name, 'a', 'bb') || '-' "
        "|| CONCAT_WS(', ', UPPER(name), LEFT(name, 3), CAST(age AS VARCHAR))) > 3"
    )
    c = _checked(sql, _catalog(name_length=64))
    # REPLACE: 64 + 64 * 1; '-': 1; CONCAT_WS: 3 * 64 + 3 + 96 (an integer's printed width
    # bound) + 2 separators of 2
    assert c.work.max_value_chars == 128 + 1 + (192 + 3 + 96 + 4)
    assert c.work.max_value_bytes == 4 * c.work.max_value_chars
    prepare(sql, _catalog(name_length=64), Noise.seeded(0))  # the whole pipeline accepts it


def test_two_squarings_of_a_short_value_are_accepted():
    c = _checked(_nested(2), _catalog())
    assert c.work.max_value_chars == 10_000
    assert c.work.expression == "REPLACE(t1, 'a', t1)"


# -- widths come from the declared schema -------------------------------------------------------
@pytest.mark.parametrize(("declared", "refused"), [(10, False), (100_000, True)])
def test_the_declared_max_length_decides(declared, refused):
    sql = _nested(2, base="name")  # 10 -> 1,000 -> 10^6 - ... ; 10^5 -> 10^10
    catalog = _catalog(name_length=declared)
    if refused:
        assert _refusal(sql, catalog).startswith("DPX-V041 ")
    else:
        assert _checked(sql, catalog).work.max_value_chars == 10 + 10 * 9 + 100 * 99
        prepare(sql, catalog, Noise.seeded(0))


def test_a_plain_reference_to_the_widest_declarable_column_is_accepted():
    sql = f"{DP} ANON_COUNT(*, 1) AS c FROM People WHERE name LIKE 'a%'"
    c = _checked(sql, _catalog(name_length=MAX_VALUE_CHARACTERS))
    assert c.work.max_value_chars == MAX_VALUE_CHARACTERS


def test_growth_over_a_public_table_is_bounded_too():
    catalog = _catalog()
    catalog.add_public("Words", pd.DataFrame({"w": ["abcdefghij" * 10]}))  # 100 characters
    sql = (
        f"{DP} ANON_COUNT(*, 1) AS c FROM People WHERE EXISTS (SELECT 1 FROM Words WHERE "
        "LENGTH(REPLACE(REPLACE(REPLACE(w, 'a', w), 'a', w), 'a', w)) > 1)"
    )
    c = _checked(sql, catalog, upto=unit_lineage)
    with pytest.raises(InputError, match="^DPX-V041 .*REPLACE"):
        check_growth(c.lineage, c.catalog)  # 100 -> 10^4 -> 10^6 -> 10^8


# -- soundness: DuckDB never computes a longer value than the bound ------------------------------
TEMPLATES = [
    "s || t",
    "CONCAT(s, t, 'xy')",
    "CONCAT_WS('--', s, t, s)",
    "REPLACE(s, 'a', t)",
    "REPLACE(s, 'ab', 'xyz')",
    "REPLACE(s, t, s)",
    "REPLACE(REPLACE(s, 'a', t), 'b', s || s)",
    "REPLACE(s, '', t)",
    "LEFT(s, 2)",
    "RIGHT(s || t, 3)",
    "LEFT(s, -1)",
    "SUBSTRING(s, 2, 3)",
    "TRIM(s)",
    "UPPER(s)",
    "LOWER(t)",
    "REVERSE(s || t)",
    "COALESCE(s, t || t)",
    "IF(s = t, s || s, t)",
    "CASE WHEN LENGTH(s) > 1 THEN s || t ELSE 'constant' END",
    "CAST(LENGTH(s) * 1000003 AS VARCHAR)",
    "CAST(uid AS VARCHAR) || s",
]
ALPHABET = "aaab ßéİﬃ"  # 'a' often: REPLACE's worst case is a string of matches


def _text_catalog(ws: int, wt: int) -> Catalog:
    schema = TableSchema(
        columns=(
            ColumnFact("uid", ColumnType.INTEGER, nullable=False),
            ColumnFact("s", ColumnType.TEXT, max_length=ws),
            ColumnFact("t", ColumnType.TEXT, max_length=wt),
        ),
        max_rows=1000,
    )
    catalog = Catalog()
    frame = pd.DataFrame({"uid": [1], "s": ["a"], "t": ["b"]})
    declare(catalog, "T", frame, "uid", schema)
    return catalog


_BOUNDS: dict[tuple[str, int, int], int] = {}


def bound_of(template: str, ws: int, wt: int) -> int:
    """The pass's bound of `template` over T(s, t) declared with max lengths ws, wt."""
    key = (template, ws, wt)
    if key not in _BOUNDS:
        sql = f"{DP} ANON_COUNT(*, 1) AS c FROM T WHERE LENGTH({template}) >= 0"
        catalog = _text_catalog(ws, wt)
        c = _checked(sql, catalog, upto=unit_lineage)
        bounder = Bounder(c.lineage, catalog)
        bounder.all_scopes()
        length = next(c.lineage.root.expression.find_all(exp.Length))
        _BOUNDS[key] = bounder.width(length.this, c.lineage.root)
    return _BOUNDS[key]


def _text(width: int):
    # values as the reader gives them: at most the declared width (in characters), often full
    return st.one_of(
        st.text(ALPHABET, min_size=width, max_size=width), st.text(ALPHABET, max_size=width)
    )


@st.composite
def _rows(draw):
    ws, wt = draw(st.integers(1, 6)), draw(st.integers(1, 6))
    rows = draw(st.lists(st.tuples(_text(ws), _text(wt)), min_size=1, max_size=5))
    return ws, wt, rows


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=_rows())
@example(data=(4, 1, [("aaaa", "a"), ("", "")]))  # REPLACE(s, t, s) squares: 16 characters
def test_duckdb_never_computes_a_longer_value_than_the_bound(data):
    ws, wt, rows = data
    frame = pd.DataFrame(
        {"uid": range(len(rows)), "s": [r[0] for r in rows], "t": [r[1] for r in rows]}
    )
    con = duckdb.connect()
    con.register("T", frame)
    for template in TEMPLATES:
        (actual,) = con.execute(f"SELECT MAX(LENGTH({template})) FROM T").fetchone()
        assert (actual or 0) <= bound_of(template, ws, wt), (template, ws, wt, rows)
    con.close()


def test_the_bound_is_tight_for_the_squaring_step():
    # REPLACE(s, 'a', s) with s all 'a' of the declared width reaches the bound exactly
    assert bound_of("REPLACE(s, 'a', s)", 8, 1) == 64
    con = duckdb.connect()
    assert con.execute("SELECT LENGTH(REPLACE('aaaaaaaa', 'a', 'aaaaaaaa'))").fetchone()[0] == 64


def test_a_function_the_bounder_does_not_know_is_refused_fail_closed():
    # e.g. REPEAT, if it were ever added to the allowlist without a bound here
    sql = f"{DP} ANON_COUNT(*, 1) AS c FROM People WHERE LENGTH(name) > 1"
    c = _checked(sql, _catalog(), upto=unit_lineage)
    length = next(c.lineage.root.expression.find_all(exp.Length))
    length.set("this", exp.Repeat(this=length.this.copy(), times=exp.Literal.number(3)))
    with pytest.raises(InputError, match=r"^DPX-V041 the size of `REPEAT\(name, 3\)` cannot be"):
        check_growth(c.lineage, c.catalog)


def test_every_allowlisted_node_has_a_bound():
    from core.dpsql.check import growth
    from core.dpsql.check.allowlist import ALLOWLIST

    known = (
        exp.Column, exp.Literal, exp.DPipe, exp.Concat, exp.Replace, exp.Left, exp.Right,
        exp.Cast, exp.TryCast, exp.Case, exp.If, exp.Nullif, exp.Min, exp.Max, exp.Subquery,
        exp.Select, *growth._SAME, *growth._CASE_MAPPED, *growth._LARGEST,
        *growth._NOT_VALUES, *growth._NON_TEXT,
    )  # fmt: skip
    structure = {t for t, e in ALLOWLIST.items() if e.totality.name == "STRUCTURE"}
    missing = [t.__name__ for t in ALLOWLIST if t not in structure and not issubclass(t, known)]
    assert missing == []
