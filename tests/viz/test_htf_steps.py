"""HTF step-by-step figure: every node and split of the traced level is drawn."""

from core.privacy import Accountant, Cost, Noise
from core.spatial.htf import build_htf
from core.spatial.htf_trace import HTFTrace, NodeFate
from core.spatial.synthetic import gaussian_matrix
from core.viz.htf_steps import FATE_LABELS, level_figure, level_summary


def test_level_figure_shows_nodes_fates_and_splits():
    F = gaussian_matrix(20_000, 20, seed=3, grid=128)
    trace = HTFTrace()
    build_htf(F, 1.0, Accountant(Noise.seeded(2), Cost(1.0)), trace=trace)
    for index in (0, len(trace.levels) // 2, len(trace.levels) - 1):
        level = trace.levels[index]
        fig = level_figure(trace, index, 128, 128)
        names = " ".join(t.name or "" for t in fig.data)
        for fate in set(level.fates):
            assert f"{FATE_LABELS[fate]} ({level.count(fate)})" in names
        hover = [h for t in fig.data if t.text is not None for h in t.text]
        assert sum(h.startswith("area ") and "noisy count" in h for h in hover) == len(level.nodes)
        if level.splits:
            assert "chosen split" in names
            n_cands = sum(len(s.candidates) for s in level.splits)
            assert sum("noisy objective" in h for h in hover) == n_cands
        assert fig.layout.title.text.startswith(f"Depth {index} of {trace.height}: ")
        summary = level_summary(trace, level)
        assert sum(summary[FATE_LABELS[f]] for f in NodeFate) == len(level.nodes)
