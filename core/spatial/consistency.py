"""Tree consistency by generalized least squares in two passes (spec htf.md §3.9).

Post-processing at no privacy cost: given noisy measurements of tree nodes, return the BLUE
of every node total under the constraint that each parent equals the sum of its children.
Runs level by level on arrays (never per node in Python), so a 1.4 M-node quadtree is cheap.

API
---
Level form (what the vectorised quadtree/kd-tree build naturally):

    x = gls_levels(parents, y, var)

* ``parents[d]`` (int64, one per node of depth d): index of the node's parent among depth d-1's
  nodes; ``parents[0]`` is ignored (depth 0 holds the root, or several roots of a forest).
* ``y[d]`` (float64): the node's measurement; ``var[d]``: its variance (``2/eps**2`` for Laplace
  with budget eps); ``np.inf`` marks an unmeasured node (its y is ignored). Every leaf (node
  without children) must be measured. Combine several measurements of one node first with
  ``combine_measurements``.
* Returns ``x[d]``: consistent estimates for every node; leaves are the release values, and
  every parent equals the sum of its children (up to float rounding).

Flat form (for trees built node by node, e.g. HTF's lazy recursion):

    x = gls_tree(parent, y, var)

* ``parent`` (int64, n): parent index of each node, -1 for a root, with ``parent[v] < v``
  (any pre-order or breadth-first numbering). ``y``, ``var`` as above, per node. Returns x (n,).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def combine_measurements(
    y1: np.ndarray, var1: np.ndarray, y2: np.ndarray, var2: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Inverse-variance combination of two independent measurements (np.inf = absent)."""
    w1 = 1.0 / np.asarray(var1, dtype=np.float64)
    w2 = 1.0 / np.asarray(var2, dtype=np.float64)
    w = w1 + w2
    with np.errstate(invalid="ignore", divide="ignore"):
        y = (np.where(w1 > 0, y1 * w1, 0.0) + np.where(w2 > 0, y2 * w2, 0.0)) / w
        var = 1.0 / w
    return np.where(w > 0, y, 0.0), var


def gls_levels(
    parents: Sequence[np.ndarray], y: Sequence[np.ndarray], var: Sequence[np.ndarray]
) -> list[np.ndarray]:
    """Upward pass (subtree estimates z, V), then downward pass (x), one level at a time."""
    depth = len(y)
    z: list[np.ndarray] = [np.empty(0)] * depth
    V: list[np.ndarray] = [np.empty(0)] * depth
    s: list[np.ndarray] = [np.empty(0)] * depth
    S: list[np.ndarray] = [np.empty(0)] * depth
    for d in range(depth - 1, -1, -1):
        yd = np.asarray(y[d], dtype=np.float64)
        w = 1.0 / np.asarray(var[d], dtype=np.float64)  # precision; 0 if unmeasured
        k = len(yd)
        if d + 1 < depth and len(parents[d + 1]):
            p = np.asarray(parents[d + 1], dtype=np.int64)
            s[d] = np.bincount(p, weights=z[d + 1], minlength=k)
            S[d] = np.bincount(p, weights=V[d + 1], minlength=k)
            inner = np.bincount(p, minlength=k) > 0
        else:
            s[d], S[d], inner = np.zeros(k), np.zeros(k), np.zeros(k, dtype=bool)
        if np.any(~inner & (w == 0)):
            raise ValueError("every leaf of the tree must be measured (finite variance)")
        yw = np.where(w > 0, yd * w, 0.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            inv_S = np.where(inner, 1.0 / S[d], 0.0)
            prec = w + inv_S
            z[d] = np.where(inner, (yw + s[d] * inv_S) / prec, yd)
            V[d] = np.where(inner, 1.0 / prec, 1.0 / w)
    x: list[np.ndarray] = [np.empty(0)] * depth
    x[0] = z[0].copy()
    for d in range(1, depth):
        p = np.asarray(parents[d], dtype=np.int64)
        x[d] = z[d] + V[d] / S[d - 1][p] * (x[d - 1] - s[d - 1])[p]
    return x


def node_depths(parent: np.ndarray) -> np.ndarray:
    """Depth of every node from parent pointers (-1 = root), by vectorised pointer jumping."""
    parent = np.asarray(parent, dtype=np.int64)
    depth = (parent >= 0).astype(np.int64)
    jump = parent.copy()
    while np.any(jump >= 0):
        live = jump >= 0
        j = jump[live]
        new_depth = depth.copy()
        new_depth[live] += depth[j]
        new_jump = jump.copy()
        new_jump[live] = jump[j]
        depth, jump = new_depth, new_jump
    return depth


def gls_tree(parent: np.ndarray, y: np.ndarray, var: np.ndarray) -> np.ndarray:
    """GLS two-pass over a flat node list (see the module docstring)."""
    parent = np.asarray(parent, dtype=np.int64)
    n = len(parent)
    if n and np.any(parent >= np.arange(n)):
        raise ValueError(
            "nodes must be numbered so that parent[v] < v (pre-order or breadth-first)"
        )
    depth = node_depths(parent)
    order = np.argsort(depth, kind="stable")
    local = np.empty(n, dtype=np.int64)
    counts = np.bincount(depth) if n else np.zeros(0, dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(counts)])
    local[order] = np.arange(n) - np.repeat(starts[:-1], counts)
    y = np.asarray(y, dtype=np.float64)
    var = np.asarray(var, dtype=np.float64)
    levels = [order[starts[d] : starts[d + 1]] for d in range(len(counts))]
    parents = [local[np.maximum(parent[idx], 0)] for idx in levels]
    x_levels = gls_levels(parents, [y[idx] for idx in levels], [var[idx] for idx in levels])
    x = np.empty(n)
    for idx, xd in zip(levels, x_levels, strict=True):
        x[idx] = xd
    return x
