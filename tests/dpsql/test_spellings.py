"""The spelling table (`core.dpsql.parse.spellings`) drives the parser: every row's example
parses, in its own form, to the aggregate the row states; its equivalent in the other form parses
to the same aggregate; the plain aggregate it replaces is refused with that example as the fix;
and a spelling used in the wrong form names the row's equivalent."""

from __future__ import annotations

import pytest

from core.dpsql.parse.dialect import parse_statements
from core.dpsql.parse.ir import AggKind
from core.dpsql.parse.normalize import normalize
from core.dpsql.parse.spellings import SPELLINGS, Form, Spelling, dp_spelling_of, names
from core.errors import InputError

OPTIONS = {
    Form.PAPER: "OPTIONS (epsilon = 1, delta = 1e-5, max_groups_contributed = 1)",
    Form.ZETA: "OPTIONS (epsilon = 1, delta = 1e-5, max_groups_contributed = 1, "
    "privacy_unit_column = uid)",
}


def _aggregate(form: Form, call: str):
    sql = f"SELECT WITH {form.value} {OPTIONS[form]} {call} AS out FROM t"
    (agg,) = normalize(parse_statements(sql)[0], {"uid"}, {}).aggregates
    return agg


def _expected_kind(row: Spelling, argument: str) -> AggKind:
    if row.is_count:
        return AggKind.COUNT_ROWS if argument == "*" else AggKind.COUNT_VALUES
    return row.kind


CALLS = [(r, "amount") for r in SPELLINGS] + [(r, "*") for r in SPELLINGS if r.is_count]


@pytest.mark.parametrize(
    ("row", "argument"), CALLS, ids=[f"{r.form.name}:{r.name}({a})" for r, a in CALLS]
)
def test_each_example_parses_to_the_aggregate_its_row_states(row: Spelling, argument):
    agg = _aggregate(row.form, row.example.format(x=argument))
    assert agg.kind == _expected_kind(row, argument)
    assert agg.clamp == row.clamp.value
    assert (agg.lower, agg.upper) != (None, None)  # the example carries its bounds
    if row.p is not None:
        assert agg.p == row.p
    elif row.takes_p:
        assert agg.p == 0.5


@pytest.mark.parametrize(
    "row", [r for r in SPELLINGS if not r.equivalent.startswith("the ")], ids=lambda r: r.name
)
def test_the_equivalent_in_the_other_form_is_the_same_aggregate(row: Spelling):
    other = Form.ZETA if row.form is Form.PAPER else Form.PAPER
    call = row.equivalent.replace("(x", "(amount").replace("(L, U)", "(0, 9)")
    call = call.replace("L, U)", "0, 9)").replace(", U)", ", 9)").replace("(0, U)", "(0, 9)")
    call = call.replace(", p,", ", 0.5,")
    mine = _aggregate(row.form, row.example.format(x="amount"))
    theirs = _aggregate(other, call)
    assert theirs.kind == mine.kind and theirs.clamp == mine.clamp


@pytest.mark.parametrize("row", SPELLINGS, ids=lambda r: f"{r.form.name}:{r.name}")
def test_a_spelling_in_the_wrong_form_names_its_equivalent(row: Spelling):
    other = Form.ZETA if row.form is Form.PAPER else Form.PAPER
    with pytest.raises(InputError, match="DPX-V029") as err:
        _aggregate(other, row.example.format(x="amount"))
    assert row.equivalent in str(err.value)


@pytest.mark.parametrize("form", list(Form))
@pytest.mark.parametrize("plain", ["SUM(amount)", "AVG(amount)", "MIN(amount)", "MAX(amount)"])
def test_a_plain_aggregate_is_refused_with_its_dp_spelling_as_the_fix(form, plain):
    key = plain.split("(")[0]
    dp = dp_spelling_of(key, form)
    with pytest.raises(InputError) as err:
        _aggregate(form, plain)
    text = str(err.value)
    if dp is None:  # no DP spelling in this form (MIN/MAX in ZetaSQL): the form's list
        assert "DPX-V020" in text and all(n in text for n in names(Form.ZETA))
    else:
        assert dp.example.format(x="amount") in text


def test_the_two_forms_spell_different_names_and_every_kind_is_reachable():
    paper, zeta = set(names(Form.PAPER)), set(names(Form.ZETA))
    assert paper and zeta and not paper & zeta
    kinds = {r.kind for r in SPELLINGS if r.kind is not None}
    assert kinds == {AggKind.SUM, AggKind.AVG, AggKind.VAR, AggKind.STDDEV, AggKind.QUANTILE}
