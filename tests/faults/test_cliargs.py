"""core/cliargs.py: the typed option validators (issue 17 item 4)."""

from __future__ import annotations

import argparse
import os
from fractions import Fraction

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from core import cliargs
from core.errors import InputError


def refused(validator, text: str) -> str:
    with pytest.raises(argparse.ArgumentTypeError) as info:
        validator(text)
    message = str(info.value)
    assert "\n" not in message and "Fix: " in message, message
    return message


@pytest.mark.parametrize("text", ["0", "-1", "nan", "inf", "1e308", "1e10", "x", "1" * 100])
def test_epsilon_is_finite_positive_and_bounded(text):
    refused(cliargs.EPSILON, text)


@pytest.mark.parametrize(("text", "value"), [("1", 1.0), ("1e-9", 1e-9), ("1e9", 1e9)])
def test_epsilon_accepts_its_documented_range(text, value):
    assert cliargs.EPSILON(text) == value


def test_delta_is_a_probability_below_one():
    assert cliargs.DELTA("0") == 0.0 and cliargs.DELTA("1e-300") == 1e-300
    for bad in ("1", "-1e-9", "nan", "2"):
        refused(cliargs.DELTA, bad)


@pytest.mark.parametrize("text", ["1/3", "0.3", ".3", "30%", "3e-1", " 2/3 "])
def test_rho_accepts_exact_decimals_fractions_and_percents(text):
    out = cliargs.RHO(text)
    assert out == text.strip()  # the tool parses the text exactly (core.balancing.params)


@pytest.mark.parametrize(
    "text", ["1e-5000", "1/0", "0", "1", "3/2", "1" * 21 + "/3", "nan", "1/3/4", "-0.3", "150%"]
)
def test_rho_refuses_unbounded_or_out_of_range_values(text):
    refused(cliargs.RHO, text)


def test_rho_values_parse_exactly_in_the_tool():
    from core.balancing.params import parse_rho

    assert parse_rho(cliargs.RHO("30%")) == Fraction(3, 10)
    assert parse_rho(cliargs.RHO("1/3")) == Fraction(1, 3)


def test_seed_range():
    assert cliargs.SEED("0") == 0 and cliargs.SEED(str(2**63 - 1)) == 2**63 - 1
    for bad in ("-1", str(2**63), "1.5", "1e3", "9" * 5000):
        refused(cliargs.SEED, bad)


def test_input_file_refuses_fifos_devices_and_directories(tmp_path, fifo):
    assert "FIFO" in refused(cliargs.INPUT_FILE, str(fifo))
    assert "directory" in refused(cliargs.INPUT_FILE, str(tmp_path))
    assert "device" in refused(cliargs.INPUT_FILE, "/dev/zero")
    assert cliargs.INPUT_FILE(str(tmp_path / "missing.csv")) == str(tmp_path / "missing.csv")
    assert "FIFO" in refused(cliargs.QUERY_FILE, str(fifo))
    assert "FIFO" in refused(cliargs.TABLE, f"t={fifo}")


def test_output_file_checks_kind_and_parent(tmp_path, dev_full, fifo):
    (tmp_path / "f").write_text("x")
    assert "is a directory" in refused(cliargs.OUTPUT_FILE, str(tmp_path))
    assert "not a regular file" in refused(cliargs.OUTPUT_FILE, str(dev_full))
    assert "not a regular file" in refused(cliargs.OUTPUT_FILE, str(fifo))
    assert "does not exist" in refused(cliargs.OUTPUT_FILE, str(tmp_path / "no" / "x.csv"))
    assert "not a directory" in refused(cliargs.OUTPUT_FILE, str(tmp_path / "f" / "x.csv"))
    ok = str(tmp_path / "new" / "x.csv")
    assert cliargs.OUTPUT_FILE_IN_NEW_DIR(ok) == ok and not os.path.exists(ok)
    refused(cliargs.OUTPUT_FILE_IN_NEW_DIR, str(tmp_path / "f" / "x.csv"))


def test_directory(tmp_path):
    (tmp_path / "f").write_text("x")
    assert cliargs.DIRECTORY(str(tmp_path / "new")) == str(tmp_path / "new")
    refused(cliargs.DIRECTORY, str(tmp_path / "f"))


def test_names_refuse_control_characters_and_texts_are_bounded():
    refused(cliargs.NAME, "a\nb")
    refused(cliargs.TEXT, "x" * (cliargs.TEXT_MAX + 1))
    assert cliargs.QUERY("SELECT 1") == "SELECT 1"


def test_lists():
    assert cliargs.QUERY_SIZES("0.1,0.5") == "0.1,0.5"
    for bad in ("0,0.1", "nan", "0.1,2", ""):
        refused(cliargs.QUERY_SIZES, bad)
    assert cliargs.FREQS("a=1,b=2") == "a=1,b=2"
    refused(cliargs.FREQS, "a=" + "9" * 5000)
    assert cliargs.BBOX("-118,33,-117,34") == "-118,33,-117,34"
    for bad in ("1,2,3", "nan,1,2,3", "1e400,1,2,3"):
        refused(cliargs.BBOX, bad)
    assert cliargs.RELEASE_ID("#3") == 3
    refused(cliargs.RELEASE_ID, "-3")


def test_nested_columns_are_refused_with_the_column_named():
    df = pd.DataFrame({"ok": [1, 2], "tags": [np.array([1, 2]), np.array([3])]})
    with pytest.raises(InputError, match="column 'tags'"):
        cliargs.refuse_nested_columns(df)
    cliargs.refuse_nested_columns(df, ["ok"])
    cliargs.refuse_nested_columns(pd.DataFrame({"n": np.arange(3, dtype=np.int64).astype(object)}))
    schema = pa.schema([("x", pa.int64()), ("l", pa.list_(pa.int64()))])
    with pytest.raises(InputError, match="column 'l'"):
        cliargs.refuse_nested_columns(schema)
    cliargs.refuse_nested_columns(schema, ["x"])
