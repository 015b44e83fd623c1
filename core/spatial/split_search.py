"""HTF's split objective (paper Eq. 5-7) and near-optimal split search (Algorithm 1, spec §2.4-2.5).

The objective sums absolute deviations from each part's mean; its sensitivity is < 2 per point
(Theorem 1), so every evaluation is rounded to a fine lattice and noised with lattice-valued
discrete Laplace noise of scale about 2 / eps'' (`split_noise_scale`) before it steers a choice.
The noise of a node's (or a whole level's) evaluations is drawn by one `LatticeLaplace`
mechanism (`split_mechanism`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from core.privacy import Accountant, LatticeLaplace
from core.privacy.noise import round_to_lattice
from core.spatial.unit import POINT, Unit

AXES = ("y", "x")
SPLIT_SENSITIVITY = 2.0  # Theorem 1: the objective's sensitivity is < 2
OBJECTIVE_LATTICE = 2.0**-10  # noisy objective values live on this lattice (exact integer noise)


def split_noise_scale(n_evals: int, eps_level: float, unit: Unit = POINT) -> float:
    """Scale of each evaluation's noise when `eps_level` is shared by `n_evals` evaluations.

    Privacy: each evaluation rounds o_s to OBJECTIVE_LATTICE (sensitivity then < 2 + lattice) and
    adds lattice-valued discrete Laplace noise (`Noise.lattice_laplace`), so each evaluation is
    eps_level / n_evals - DP with scale n_evals (2 + lattice) / eps_level — the paper's
    2 n_evals / eps_level inflated by a factor 1 + 2^-11 to pay for the rounding. A person with
    at most K points: K (2 + lattice) per evaluation (over the disjoint nodes a person's points
    fall in, sum of 2 k_v + lattice <= K (2 + lattice)).
    """
    return n_evals * unit.max_points * (SPLIT_SENSITIVITY + OBJECTIVE_LATTICE) / eps_level


def split_mechanism(
    label: str, n_evals: int, eps_level: float, unit: Unit = POINT, **kw
) -> LatticeLaplace:
    """The lattice Laplace mechanism noising `n_evals` split evaluations per node with
    `eps_level` (vector sensitivity n_evals K (2 + lattice); scale = `split_noise_scale`)."""
    return LatticeLaplace(
        label,
        sensitivity=n_evals * unit.max_points * (SPLIT_SENSITIVITY + OBJECTIVE_LATTICE),
        epsilon=float(eps_level),
        lattice=OBJECTIVE_LATTICE,
        **kw,
    )


def split_draws(mechanism: LatticeLaplace, accountant: Accountant, size) -> np.ndarray:
    """Pre-drawn noise for split evaluations, drawn by `mechanism` (one vector call)."""
    return mechanism.noise_only(accountant, size)


def noisy_objective(o, draws):
    """o_s rounded to the lattice plus its pre-drawn lattice noise (the released comparison value)."""
    return round_to_lattice(o, OBJECTIVE_LATTICE) + draws


def objective(Fr: np.ndarray, axis: str, s: int) -> float:
    """o_s = sum_A |F - mu_A| + sum_B |F - mu_B| for the split of `Fr` at offset s along `axis`.

    `axis="y"` cuts between rows s-1 and s (A = first s rows); `"x"` between columns.
    Evaluated in float64 on numpy slices (absolute deviations have no prefix-sum shortcut).
    """
    Ff = np.asarray(Fr, dtype=np.float64)
    if axis == "y":
        A, B = Ff[:s], Ff[s:]
    elif axis == "x":
        A, B = Ff[:, :s], Ff[:, s:]
    else:
        raise ValueError(f"axis must be 'y' or 'x', got {axis!r}")
    if A.size == 0 or B.size == 0:
        raise ValueError(f"offset {s} leaves an empty part")
    return _abs_dev(A) + _abs_dev(B)


def _abs_dev(part: np.ndarray) -> float:
    mu = part.sum() / part.size
    return float(np.abs(part - mu).sum())


def get_split_offset(
    Fr: np.ndarray,
    axis: str,
    eps_level: float,
    T: int,
    accountant: Accountant | None,
    evaluated: list[int] | None = None,
    draws: np.ndarray | None = None,
    objective_fn=None,
    unit: Unit = POINT,
) -> int:
    """Algorithm 1, index-exact (spec §2.5): an offset s in [1, L-1] along `axis`.

    Each noisy evaluation gets eps_level / (2T + 1); each offset is noised at most once, so at
    most 2T + 1 evaluations are made. `evaluated`, if given, receives the offsets evaluated
    (in order) — for tests. The 2T + 1 draws are taken in one vector call (unused ones are
    discarded unseen; discarding noise costs no privacy). `draws` may supply them pre-drawn
    (2T + 1 values of `split_draws`, fresh for this node): HTF draws
    a whole level's split noise in one call, which matters for the secure sampler. Without
    them the node's noise is drawn on `accountant` by a one-node `split_mechanism`.
    `objective_fn(s)`, if given, computes o_s instead of the direct pass over `Fr` (e.g.
    `FastObjective.split`); `Fr` then only needs the node's shape.
    """
    Ff = np.asarray(Fr) if objective_fn is not None else np.asarray(Fr, dtype=np.float64)
    L = Ff.shape[0] if axis == "y" else Ff.shape[1]
    if L < 2:
        raise ValueError("a split needs an extent of at least 2 along the axis")
    if L == 2:
        return 1  # one candidate: nothing to choose, no noise drawn
    if draws is None:
        mech = split_mechanism("htf: split search (one node)", 2 * T + 1, eps_level, unit)
        draws = split_draws(mech, accountant, 2 * T + 1)
    elif len(draws) < 2 * T + 1:
        raise ValueError("need 2T + 1 pre-drawn noise values")
    draws = iter(draws)
    noisy: dict[int, float] = {}

    def ev(s: int) -> float:
        if s not in noisy:
            o = objective_fn(s) if objective_fn is not None else objective(Ff, axis, s)
            noisy[s] = float(noisy_objective(o, float(next(draws))))
            if evaluated is not None:
                evaluated.append(s)
        return noisy[s]

    lo, hi = 0, L  # node edges: sentinels, never candidates
    k = (lo + hi) // 2
    ev(k)
    for _ in range(T):
        k1 = k - (k - lo + 1) // 2
        k2 = k + (hi - k + 1) // 2
        cand = [k] + [s for s in (k1, k2) if lo < s < hi]
        if len(cand) == 1:
            break  # interval exhausted; the rest of the budget stays unspent
        best = min(cand, key=lambda s: (ev(s), cand.index(s)))  # ties: centre, then k1, then k2
        if best == k:
            lo, hi = k1, k2
        elif best == k1:
            hi, k = k, k1  # simultaneous: hi takes the OLD k
        else:
            lo, k = k, k2
    return k


def exhaustive_split_offset(
    Fr: np.ndarray,
    axis: str,
    mechanism_for: Callable[[int], LatticeLaplace],
    accountant: Accountant,
    evaluated: list[int] | None = None,
) -> int:
    """Optional exhaustive search (paper §4.1.1): every offset 1..L-1 at eps_level/(L-1) each.

    `mechanism_for(L - 1)` gives the `split_mechanism` for L - 1 evaluations (one object per
    distinct L at a level, so nodes of equal extent share it: disjoint parts)."""
    Ff = np.asarray(Fr, dtype=np.float64)
    L = Ff.shape[0] if axis == "y" else Ff.shape[1]
    if L < 2:
        raise ValueError("a split needs an extent of at least 2 along the axis")
    if L == 2:
        return 1
    offsets = range(1, L)
    vals = np.array([objective(Ff, axis, s) for s in offsets])
    if evaluated is not None:
        evaluated.extend(offsets)
    vals = noisy_objective(vals, split_draws(mechanism_for(L - 1), accountant, L - 1))
    return int(np.argmin(vals)) + 1


class FastObjective:
    """Exact O(1) evaluation of the split objective from summed-area tables.

    For integer counts x >= 0 and a part with n cells, total S and mean mu = S/n:

        sum |x - mu| = S - 2 S_low - mu (n - 2 n_low),   over x < mu  <=>  x <= k = (S - 1) // n

    where n_low = #{x <= k} and S_low = sum of x over {x <= k}. Both come in O(1) from
    summed-area tables of 1[F <= k] and F * 1[F <= k], built lazily for small k when a large part
    needs them (most parts of sparse data have mu <= 1, so k = 0: the zero-cell count). Other
    parts use the direct numpy pass (`objective`); both agree up to float rounding (tested).
    """

    def __init__(
        self,
        F: np.ndarray,
        S: np.ndarray,
        max_bytes: int = 256 * 2**20,
        max_k: int = 2,
        min_cells: int = 32768,
    ):
        self.F = np.asarray(F)
        self.Ff: np.ndarray | None = None
        self.S = S  # int64 summed-area table of F, shape (ny+1, nx+1)
        self.tables: dict[int, tuple[np.ndarray, np.ndarray | None]] = {}
        total = int(S[-1, -1])
        self.dtype = np.int32 if total < 2**31 and F.size < 2**31 else np.int64
        self.table_bytes = S.size * np.dtype(self.dtype).itemsize
        self.budget = max_bytes
        self.max_k = max_k  # tables are built only for k <= max_k ...
        self.min_cells = min_cells  # ... and only when a part this large asks for one
        self.fallbacks: dict[int, int] = {}  # direct passes per k (a table pays off after many)
        self.fallback_limit = 2000

    def _sat(self, A: np.ndarray) -> np.ndarray:
        T = np.zeros(self.S.shape, dtype=self.dtype)
        np.cumsum(np.cumsum(A, axis=0, dtype=self.dtype), axis=1, out=T[1:, 1:])
        return T

    def _table(self, k: int, n: int):
        if k not in self.tables:
            if k > self.max_k or n < self.min_cells:
                return None  # small or dense parts: the direct pass is cheaper than a new table
            return self._build(k)
        return self.tables[k]

    def _build(self, k: int):
        """Build the tables for k if the memory budget allows (else None)."""
        need = self.table_bytes * (1 if k == 0 else 2)
        if need > self.budget:
            return None
        self.budget -= need
        low = k >= self.F
        self.tables[k] = (self._sat(low), None if k == 0 else self._sat(np.where(low, self.F, 0)))
        return self.tables[k]

    @staticmethod
    def _rect(T: np.ndarray, r0: int, r1: int, c0: int, c1: int) -> int:
        return int(T[r1, c1]) - int(T[r0, c1]) - int(T[r1, c0]) + int(T[r0, c0])

    def part(self, r0: int, r1: int, c0: int, c1: int) -> float:
        """sum |F - mu| over the rectangle [r0, r1) x [c0, c1)."""
        n = (r1 - r0) * (c1 - c0)
        total = self._rect(self.S, r0, r1, c0, c1)
        if total == 0:
            return 0.0
        k = (total - 1) // n
        tab = self._table(k, n)
        if tab is None:
            if self.Ff is None:
                self.Ff = self.F.astype(np.float64)
            return _abs_dev(self.Ff[r0:r1, c0:c1])
        n_low = self._rect(tab[0], r0, r1, c0, c1)
        s_low = 0 if tab[1] is None else self._rect(tab[1], r0, r1, c0, c1)
        mu = total / n
        return float(total - 2 * s_low - mu * (n - 2 * n_low))

    def split(self, R: tuple[int, int, int, int], axis: str, s: int) -> float:
        """o_s for node R = (r0, r1, c0, c1) split at offset s along `axis`."""
        r0, r1, c0, c1 = R
        if axis == "y":
            return self.part(r0, r0 + s, c0, c1) + self.part(r0 + s, r1, c0, c1)
        return self.part(r0, r1, c0, c0 + s) + self.part(r0, r1, c0 + s, c1)


def _parts_abs_dev(fast: FastObjective, R: np.ndarray) -> np.ndarray:
    """sum |F - mu| for many rectangles R (k, 4) at once (vectorised `FastObjective.part`)."""
    S = fast.S
    r0, r1, c0, c1 = R[:, 0], R[:, 1], R[:, 2], R[:, 3]

    def rect(T):
        return T[r1, c1].astype(np.int64) - T[r0, c1] - T[r1, c0] + T[r0, c0]  # int64 arithmetic

    n = (r1 - r0) * (c1 - c0)
    total = rect(S)
    out = np.zeros(len(R))
    nz = total > 0
    k = np.where(nz, (total - 1) // np.maximum(n, 1), -1)
    todo = nz.copy()
    for kk in np.unique(k[nz]):
        sel = todo & (k == kk)
        big = bool(np.any(n[sel] >= fast.min_cells))
        fast.fallbacks[kk] = fast.fallbacks.get(kk, 0) + int(sel.sum())
        wants = (big and kk <= fast.max_k) or fast.fallbacks[kk] > fast.fallback_limit
        tab = fast.tables.get(int(kk)) or (fast._build(int(kk)) if wants else None)
        if tab is None:
            continue
        idx = np.flatnonzero(sel)
        rr0, rr1, cc0, cc1 = r0[idx], r1[idx], c0[idx], c1[idx]

        def rect_i(T, rr0=rr0, rr1=rr1, cc0=cc0, cc1=cc1):
            return T[rr1, cc1].astype(np.int64) - T[rr0, cc1] - T[rr1, cc0] + T[rr0, cc0]

        n_low = rect_i(tab[0])
        s_low = 0 if tab[1] is None else rect_i(tab[1])
        tot, nn = total[idx], n[idx]
        out[idx] = tot - 2 * s_low - (tot / nn) * (nn - 2 * n_low)
        todo[idx] = False
    if todo.any():  # dense small parts: direct numpy pass per part
        if fast.Ff is None:
            fast.Ff = fast.F.astype(np.float64)
        for i in np.flatnonzero(todo):
            out[i] = _abs_dev(fast.Ff[r0[i] : r1[i], c0[i] : c1[i]])
    return out


def level_split_offsets(
    nodes: np.ndarray,
    axes: np.ndarray,
    draws: np.ndarray,
    T: int,
    fast: FastObjective,
    record: dict | None = None,
) -> np.ndarray:
    """Algorithm 1 for all nodes of one tree level at once (same result as `get_split_offset`).

    `nodes` (m, 4) rectangles, `axes` (m,) 0 = split rows (y) / 1 = split columns (x),
    `draws` (m, 2T + 1) fresh noise values per node (`split_draws`), used in the order
    in which each node's offsets are first evaluated — exactly as the scalar version uses them,
    so both return identical offsets for identical draws (tested). Vectorising over a level's
    nodes removes the per-node Python overhead of the search. `record`, if given, receives
    "offsets" (m, 2T + 1; -1 = unused) and "values" (the noisy objective values) — the HTF trace.
    """
    m = len(nodes)
    r0, r1, c0, c1 = (nodes[:, j].astype(np.int64) for j in range(4))
    L = np.where(axes == 0, r1 - r0, c1 - c0)
    if np.any(L < 2):
        raise ValueError("a split needs an extent of at least 2 along the axis")
    offs = np.full((m, 2 * T + 1), -1, dtype=np.int64)
    vals = np.zeros((m, 2 * T + 1))
    n_eval = np.zeros(m, dtype=np.int64)

    def evaluate(idx: np.ndarray, s: np.ndarray) -> np.ndarray:
        """Noisy o_s for nodes idx at offsets s; each (node, offset) is noised at most once."""
        hit = offs[idx] == s[:, None]
        seen = hit.any(axis=1)
        out = np.empty(len(idx))
        out[seen] = vals[idx[seen], hit[seen].argmax(axis=1)]
        new = np.flatnonzero(~seen)
        if len(new):
            i, sv = idx[new], s[new]
            y = axes[i] == 0
            A = np.stack(
                [r0[i], np.where(y, r0[i] + sv, r1[i]), c0[i], np.where(y, c1[i], c0[i] + sv)], 1
            )
            B = np.stack(
                [np.where(y, r0[i] + sv, r0[i]), r1[i], np.where(y, c0[i], c0[i] + sv), c1[i]], 1
            )
            o = _parts_abs_dev(fast, np.concatenate([A, B]))
            o = o[: len(new)] + o[len(new) :]
            j = n_eval[i]
            v = noisy_objective(o, draws[i, j])
            offs[i, j], vals[i, j] = sv, v
            n_eval[i] += 1
            out[new] = v
        return out

    lo = np.zeros(m, dtype=np.int64)
    hi = L.copy()
    k = L // 2
    active = np.flatnonzero(L > 2)  # L == 2: offset 1, no noise drawn
    k[L == 2] = 1
    if len(active):
        evaluate(active, k[active])
    for _ in range(T):
        if not len(active):
            break
        a = active
        k1 = k[a] - (k[a] - lo[a] + 1) // 2
        k2 = k[a] + (hi[a] - k[a] + 1) // 2
        ok1 = (lo[a] < k1) & (k1 < hi[a])
        ok2 = (lo[a] < k2) & (k2 < hi[a])
        go = ok1 | ok2
        a, k1, k2, ok1, ok2 = a[go], k1[go], k2[go], ok1[go], ok2[go]
        if not len(a):
            active = a
            break
        vk = evaluate(a, k[a])
        v1 = np.full(len(a), np.inf)
        v2 = np.full(len(a), np.inf)
        if ok1.any():
            v1[ok1] = evaluate(a[ok1], k1[ok1])
        if ok2.any():
            v2[ok2] = evaluate(a[ok2], k2[ok2])
        best_k = (vk <= v1) & (vk <= v2)
        best_1 = ~best_k & (v1 <= v2)
        best_2 = ~best_k & ~best_1
        old_k = k[a].copy()
        lo[a[best_k]], hi[a[best_k]] = k1[best_k], k2[best_k]
        hi[a[best_1]], k[a[best_1]] = old_k[best_1], k1[best_1]
        lo[a[best_2]], k[a[best_2]] = old_k[best_2], k2[best_2]
        active = a
    if record is not None:
        record["offsets"], record["values"] = offs, vals
    return k
