"""HTF's levels in sentences (issue 20, Build 7): every node's fate explained with the numbers
that decided it, formatted for people."""

from __future__ import annotations

import re

import numpy as np
import pytest

from core.privacy import Accountant, Cost, Noise
from core.spatial.htf import build_htf
from core.spatial.htf_explain import MAX_NODE_SENTENCES, explain_level, num
from core.spatial.htf_trace import HTFTrace, NodeFate


@pytest.fixture(scope="module")
def trace() -> HTFTrace:
    rng = np.random.default_rng(4)
    F = rng.poisson(0.2, size=(64, 64))
    F[10:20, 40:52] += rng.poisson(60, size=(10, 12))
    t = HTFTrace()
    build_htf(F, 2.0, Accountant(Noise.seeded(3), Cost(2.0)), trace=t, height=6,
              eps_prt_level=0.05, stop_count=50, stop_cells=5)  # fmt: skip
    return t


def test_numbers_are_formatted_for_people():
    assert num(12345.678) == "12,346" and num(3.14159) == "3.14" and num(0.002147) == "0.00215"
    assert num(-87.4) == "-87.4" and num(0) == "0" and num(float("nan")) == "—"
    assert num(50.0) == "50" and num(-3.0) == "-3"  # counts read as counts


def test_every_level_explains_every_fate_with_its_numbers(trace):
    seen = set()
    for index, level in enumerate(trace.levels):
        ex = explain_level(trace, index)
        text = ex.text()
        assert ex.title.startswith(f"Depth {index} of {trace.height}: ")
        assert "e+" not in text and "e-" not in text  # no exponents anywhere
        assert len(ex.nodes) == min(len(level.fates), MAX_NODE_SENTENCES)
        assert ex.more == max(0, len(level.fates) - MAX_NODE_SENTENCES)
        for k, sentence in enumerate(ex.nodes):
            fate = level.fates[k]
            seen.add(fate)
            y = float(level.noisy_counts[k])
            if fate is NodeFate.SPLIT:
                assert f"noisy count {num(y)} > 50, so it splits" in sentence
            elif fate is NodeFate.STOP_COUNT:
                assert f"noisy count {num(y)} ≤ 50, so it stops" in sentence
            elif fate is NodeFate.STOP_CELLS:
                assert "cells (< 5)" in sentence
            else:
                assert "last depth reached" in sentence
        for fate in set(level.fates):
            n = level.count(fate)
            assert any(s.startswith(f"{n:,} area(s)") for s in ex.summary), (fate, ex.summary)
    assert {NodeFate.SPLIT, NodeFate.STOP_COUNT} <= seen


def test_a_split_sentence_names_the_cut_the_next_level_shows(trace):
    for index, level in enumerate(trace.levels[:-1]):
        nxt = trace.levels[index + 1]
        for s in level.splits[:MAX_NODE_SENTENCES]:
            if s.node >= MAX_NODE_SENTENCES:
                continue
            r0, r1, c0, c1 = (int(v) for v in level.nodes[s.node])
            cut = (r0 if s.axis == "y" else c0) + s.chosen
            sentence = explain_level(trace, index).nodes[s.node]
            assert (
                f"between {'rows' if s.axis == 'y' else 'columns'} {cut - 1:,} and {cut:,}"
                in sentence
            )
            child = [r0, cut, c0, c1] if s.axis == "y" else [r0, r1, c0, cut]
            assert child in nxt.nodes.tolist()  # the first child exists one level down
            if s.candidates:
                m = re.search(r"among the (\d+) cut positions tried", sentence)
                assert m and int(m.group(1)) == len(s.candidates)


PAPER_WORDS = ("homogeneity", "Algorithm", "objective", "height", "Laplace", "− d", "2T")


def test_the_main_sentences_are_for_a_student_and_the_paper_is_one_click_away(trace):
    """Issue 32: the title and summary use no paper wording; `paper` keeps it (with its
    numbers), for the expander beside the sentences."""
    for index, level in enumerate(trace.levels):
        ex = explain_level(trace, index)
        main = " ".join([ex.title, *ex.summary])
        assert not [w for w in PAPER_WORDS if w in main], main
        paper = " ".join(ex.paper)
        assert f"height {level.height}" in paper and "h − d" in paper
        assert f"discrete Laplace noise of scale {num(level.count_scale)}" in paper
        if level.splits:
            assert "Algorithm 1" in paper and "homogeneity objective" in paper
        assert f"ε {num(level.epsilon_spent)}" in paper
