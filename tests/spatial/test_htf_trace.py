"""HTF step by step: the trace comes from the release's own code path and explains every node."""

import numpy as np
import pytest

from core.privacy import Accountant, Cost, Noise
from core.spatial.htf import build_htf, split_children
from core.spatial.htf_trace import HTFTrace, NodeFate
from core.spatial.synthetic import gaussian_matrix


@pytest.fixture(scope="module")
def F():
    return gaussian_matrix(50_000, 30, seed=11, grid=256)


def traced(F, seed=5, **params):
    trace = HTFTrace()
    rel = build_htf(F, 0.5, Accountant(Noise.seeded(seed), Cost(0.5)), trace=trace, **params)
    return rel, trace


@pytest.mark.parametrize("params", [{}, {"combine_pruned": True}])
def test_tracing_does_not_change_the_release_and_its_leaves_are_the_release(F, params):
    rel, trace = traced(F, **params)
    plain = build_htf(F, 0.5, Accountant(Noise.seeded(5), Cost(0.5)), **params)
    assert np.array_equal(rel.leaves, plain.leaves) and np.array_equal(rel.values, plain.values)
    leaves = np.concatenate(
        [lv.nodes[[f is not NodeFate.SPLIT for f in lv.fates]] for lv in trace.levels]
    )
    values = np.concatenate(
        [lv.released_values[~np.isnan(lv.released_values)] for lv in trace.levels]
    )
    assert np.array_equal(leaves, rel.leaves) and np.array_equal(values, rel.values)
    assert trace.height == rel.info["height"]


def test_levels_chain_through_the_recorded_splits(F):
    _, trace = traced(F)
    assert [lv.height for lv in trace.levels] == list(
        range(trace.height, trace.height - len(trace.levels), -1)
    )
    for lv, nxt in zip(trace.levels, trace.levels[1:], strict=False):
        split = [s.node for s in lv.splits]
        assert split == [j for j, f in enumerate(lv.fates) if f is NodeFate.SPLIT]
        axes = np.array([0 if s.axis == "y" else 1 for s in lv.splits])
        offsets = np.array([s.chosen for s in lv.splits])
        assert np.array_equal(split_children(lv.nodes[split], axes, offsets), nxt.nodes)


def test_every_fate_has_its_reason(F):
    _, trace = traced(F)
    seen = set()
    for lv in trace.levels:
        cells = (lv.nodes[:, 1] - lv.nodes[:, 0]) * (lv.nodes[:, 3] - lv.nodes[:, 2])
        for j, fate in enumerate(lv.fates):
            seen.add(fate)
            if fate is NodeFate.SPLIT:
                assert lv.noisy_counts[j] > trace.stop_count and lv.height > 0
            elif fate is NodeFate.STOP_COUNT:
                assert lv.noisy_counts[j] <= trace.stop_count
            elif fate is NodeFate.STOP_HEIGHT:
                assert lv.height == 0
            else:
                h, w = lv.nodes[j, 1] - lv.nodes[j, 0], lv.nodes[j, 3] - lv.nodes[j, 2]
                assert cells[j] < trace.stop_cells or (h < 2 and w < 2)
    assert {NodeFate.SPLIT, NodeFate.STOP_COUNT} <= seen


def test_split_candidates_and_choice(F):
    _, trace = traced(F)
    n = 0
    for lv in trace.levels:
        for s in lv.splits:
            extent = lv.nodes[s.node, 1] - lv.nodes[s.node, 0] if s.axis == "y" else (
                lv.nodes[s.node, 3] - lv.nodes[s.node, 2])  # fmt: skip
            assert 1 <= s.chosen < extent
            if extent > 2:
                assert 1 <= len(s.candidates) <= 7 and s.chosen in s.candidates
                assert len(set(s.candidates)) == len(s.candidates) == len(s.noisy_objective)
                n += 1
    assert n > 10


def test_budget_so_far_grows_to_the_total(F):
    rel, trace = traced(F)
    spent = [lv.epsilon_spent for lv in trace.levels]
    assert all(a < b for a, b in zip(spent, spent[1:], strict=False))
    assert spent[-1] == pytest.approx(0.5) and max(spent) <= 0.5 + 1e-12
    shares = rel.info["eps_shares"]
    for lv in trace.levels:
        assert lv.count_scale == pytest.approx(1 / shares[lv.height])
        assert (lv.split_scale is None) == (lv.height == 0)


def test_seeded_trace_is_reproducible(F):
    _, a = traced(F, seed=8)
    _, b = traced(F, seed=8)
    _, c = traced(F, seed=9)
    key = lambda t: [(lv.nodes.tolist(), lv.fates, lv.splits) for lv in t.levels]  # noqa: E731
    assert key(a) == key(b) and key(a) != key(c)
