"""Issue 29: budget numbers shown to people are rounded once (core.numbers.shown), so a
remaining epsilon reads 0.9, not 0.8999999999999999."""

from __future__ import annotations

import json

from core.cli.common import registry_info, registry_line
from core.registry import Mechanism, Policy, Registry


def test_remaining_budget_in_cli_output_is_rounded_once(tmp_path):
    table = tmp_path / "t.csv"
    table.write_text("a\n1\n")
    reg = Registry(tmp_path / "reg")
    reg.add_dataset("d", [("t", table)], Policy(2.0))
    for eps in (0.1, 0.3, 0.7):
        rel = reg.charge("sql", "d", {}, [Mechanism("m", eps)], "secure")
    assert reg.remaining("d")[0] != 0.9  # the float sum: 0.8999999999999999
    info = registry_info(reg, rel)
    assert info["epsilon_remaining"] == 0.9
    assert '"epsilon_remaining": 0.9,' in json.dumps(info)
    assert "remaining epsilon 0.9," in registry_line(info)


def test_shown_keeps_small_and_exact_values():
    from core.numbers import shown

    assert shown(1e-5) == 1e-5 and shown(0.1 + 0.2) == 0.3 and shown(3) == 3
    assert shown(None) is None and shown(0.0) == 0.0 and shown(float("inf")) == float("inf")


def test_delta_text_is_short_enough_for_a_table_cell():
    """Issue 32: the Releases list clipped δ = 8e-07 as ").0000008"."""
    from core.numbers import delta_text

    assert delta_text(8e-07) == "8e-07" and delta_text(1e-5) == "1e-05"
    assert delta_text(0.0) == "0" and delta_text(None) == "0"
    assert delta_text(0.1 + 0.2) == "0.3" and delta_text(2e-06 + 1e-06) == "3e-06"
