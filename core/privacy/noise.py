"""Noise sources: OpenDP's exact samplers (secure) or a seeded numpy Generator (demo).

Every random draw in `core` goes through a `Noise` object, so a release is either
secure (OpenDP, OS entropy, never seeded) or visibly labelled as reproducible demo output.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cache
from typing import Literal

import numpy as np

Mode = Literal["secure", "seeded"]

SEEDED_LABEL = "reproducible demo mode — not for real releases"


@cache
def _opendp():
    import opendp.prelude as dp

    dp.enable_features("contrib")
    return dp


@cache
def _opendp_laplace(kind: Literal["float", "int"], scale: float):
    dp = _opendp()
    # integers are 64-bit: OpenDP's `int` means i32, whose sampler saturates at large scales
    atom = dp.atom_domain(T=float, nan=False) if kind == "float" else dp.atom_domain(T="i64")
    metric = dp.l1_distance(T=float) if kind == "float" else dp.l1_distance(T="i64")
    return dp.m.make_laplace(dp.vector_domain(atom), metric, scale=float(scale))


@cache
def _opendp_gaussian(scale: float):
    """OpenDP's exact discrete Gaussian sampler on a vector of 64-bit integers (Canonne, Kamath,
    Steinke 2020: rejection from discrete Laplace, exact arithmetic, no floating point)."""
    dp = _opendp()
    domain = dp.vector_domain(dp.atom_domain(T="i64"))
    return dp.m.make_gaussian(domain, dp.l2_distance(T="i64"), scale=float(scale))


def _check_scale(scale: float) -> float:
    scale = float(scale)
    if not np.isfinite(scale) or scale < 0:
        raise ValueError(f"noise scale must be a finite number >= 0, got {scale}")
    return scale


@dataclass
class Noise:
    """A noise source in one of two modes.

    `secure`: OpenDP's Laplace samplers (discrete Laplace on integers, Laplace on a
    fine float grid for reals), its discrete Gaussian on integers, and OS entropy for uniform
    draws; cannot be seeded.
    `seeded`: numpy's PCG64 with a seed; reproducible, for teaching, tests and benchmarks.
    """

    mode: Mode = "secure"
    seed: int | None = None
    _rng: np.random.Generator | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.mode == "secure":
            if self.seed is not None:
                raise ValueError("secure noise is never seeded; use Noise.seeded(seed) for demos")
        elif self.mode == "seeded":
            if self.seed is None:
                raise ValueError("seeded noise needs a seed")
            self._rng = np.random.default_rng(self.seed)
        else:
            raise ValueError(f"unknown noise mode {self.mode!r}")

    @classmethod
    def secure(cls) -> Noise:
        return cls("secure")

    @classmethod
    def seeded(cls, seed: int) -> Noise:
        return cls("seeded", int(seed))

    @classmethod
    def from_seed(cls, seed: int | None) -> Noise:
        """Seeded when a seed is given, secure otherwise (the CLI's `--seed` rule)."""
        return cls.secure() if seed is None else cls.seeded(seed)

    @property
    def is_secure(self) -> bool:
        return self.mode == "secure"

    @property
    def label(self) -> str:
        return "secure (OpenDP)" if self.is_secure else f"seeded (seed {self.seed}): {SEEDED_LABEL}"

    def describe(self) -> dict:
        """Mode metadata for JSON output and exports; the seed is stated only in seeded mode."""
        out: dict = {"mode": self.mode}
        if not self.is_secure:
            out["seed"] = self.seed
            out["warning"] = SEEDED_LABEL
        return out

    # -- Laplace ------------------------------------------------------------------------
    def laplace(self, scale: float, size: int | tuple[int, ...] | None = None):
        """Zero-centred Laplace(scale) noise on reals: a float, or an array of `size`."""
        scale = _check_scale(scale)
        shape = () if size is None else size
        n = int(np.prod(shape))
        if scale == 0 or n == 0:
            out = np.zeros(shape)
        elif self.is_secure:
            out = _secure_draws(_opendp_laplace("float", scale), n, np.float64).reshape(shape)
        else:
            out = self._rng.laplace(0.0, scale, size=shape)
        return float(out) if size is None else out

    def discrete_laplace(self, scale: float, size: int | tuple[int, ...] | None = None):
        """Zero-centred discrete Laplace (two-sided geometric), P(k) ∝ exp(-|k|/scale): integers."""
        scale = _check_scale(scale)
        shape = () if size is None else size
        n = int(np.prod(shape))
        if scale == 0 or n == 0:
            out = np.zeros(shape, dtype=np.int64)
        elif self.is_secure:
            # one OpenDP call for the whole vector (the measurement is cached per scale); a numpy
            # input avoids building a Python list of n zeros
            out = _secure_draws(_opendp_laplace("int", scale), n, np.int64).reshape(shape)
        else:
            # difference of two i.i.d. geometric variables on {0, 1, ...} with p = 1 - exp(-1/scale)
            p = -np.expm1(-1.0 / scale)
            out = (self._rng.geometric(p, size=shape) - self._rng.geometric(p, size=shape)).astype(
                np.int64
            )
        return int(out) if size is None else out

    def lattice_laplace(
        self, scale: float, size: int | tuple[int, ...], lattice: float = 2.0**-10
    ) -> np.ndarray:
        """Laplace-shaped noise on the lattice `lattice`·Z: `lattice * K`, K ~ discrete Laplace.

        For a real-valued statistic f that the caller first rounds to the same lattice
        (`round_to_lattice`): if |f(D) - f(D')| <= d, the rounded values differ by at most
        d + lattice, i.e. (d + lattice) / lattice lattice steps, and adding `lattice * K` with
        K ~ discrete Laplace(scale / lattice) is (d + lattice) / scale - DP (Canonne, Kamath,
        Steinke 2020, discrete Laplace; OpenDP `make_laplace` on i64 states ε = Δ / scale for
        integer sensitivity Δ). Callers therefore pass scale = (d + lattice) / ε. Secure mode
        draws K with OpenDP's exact 64-bit integer sampler in one vector call (several times
        faster than its float sampler, and free of floating-point attacks on the noise);
        seeded mode draws the same distribution from the seeded generator.
        """
        lattice = float(lattice)
        if not (lattice > 0 and np.isfinite(lattice)):
            raise ValueError(f"lattice must be a finite number > 0, got {lattice}")
        steps = self.discrete_laplace(_check_scale(scale) / lattice, size=size)
        return np.asarray(steps, dtype=np.float64) * lattice

    # -- Gaussian -------------------------------------------------------------------------
    def discrete_gaussian(self, sigma: float, size: int | tuple[int, ...] | None = None):
        """Zero-centred discrete Gaussian on the integers, P(k) ∝ exp(-k²/(2σ²)).

        Secure mode: OpenDP's exact sampler (`make_gaussian` on a vector of i64, OS entropy).
        Seeded mode: the same distribution by Canonne, Kamath and Steinke's rejection sampler
        (Algorithm 3: discrete Laplace proposals of scale t = floor(σ) + 1, accepted with
        probability exp(-(|y| - σ²/t)² / (2σ²))), drawn from the seeded generator."""
        sigma = _check_scale(sigma)
        shape = () if size is None else size
        n = int(np.prod(shape))
        if sigma == 0 or n == 0:
            out = np.zeros(shape, dtype=np.int64)
        elif self.is_secure:
            out = _secure_draws(_opendp_gaussian(sigma), n, np.int64).reshape(shape)
        else:
            out = self._seeded_discrete_gaussian(sigma, n).reshape(shape)
        return int(out) if size is None else out

    def _seeded_discrete_gaussian(self, sigma: float, n: int) -> np.ndarray:
        t = float(np.floor(sigma) + 1)
        p = -np.expm1(-1.0 / t)
        out = np.empty(0, dtype=np.int64)
        while out.size < n:
            m = max(64, 2 * (n - out.size))  # acceptance is >= about 1/2 per proposal
            y = self._rng.geometric(p, size=m) - self._rng.geometric(p, size=m)
            accept = self._rng.random(m) < np.exp(
                -((np.abs(y) - sigma**2 / t) ** 2) / (2 * sigma**2)
            )
            out = np.concatenate([out, y[accept].astype(np.int64)])
        return out[:n]

    def add_laplace(self, values, scale: float) -> np.ndarray:
        """`values` plus vectorised Laplace noise (integers get discrete Laplace)."""
        arr = np.asarray(values)
        if np.issubdtype(arr.dtype, np.integer):
            return arr + self.discrete_laplace(scale, size=arr.shape)
        return arr.astype(float) + self.laplace(scale, size=arr.shape)

    # -- uniform draws (randomized response, sampling) ------------------------------------
    def integers(self, high: int | np.ndarray, size: int | None = None) -> np.ndarray:
        """Uniform integers in [0, high) — `high` may be an array (one bound per draw).

        Secure mode uses OS entropy with rejection sampling, so every value is exactly equally likely.
        """
        high_arr = np.asarray(high, dtype=np.int64)
        shape = high_arr.shape if size is None else (size,)
        high_arr = np.broadcast_to(high_arr, shape)
        if np.any(high_arr < 1):
            raise ValueError("integers(high): every bound must be >= 1")
        if not self.is_secure:
            return self._rng.integers(0, high_arr, size=shape)
        return _secure_integers(high_arr)

    def uniform(self, size: int) -> np.ndarray:
        """Uniform floats in [0, 1) with 53 random bits each."""
        if not self.is_secure:
            return self._rng.random(size)
        words = np.frombuffer(os.urandom(8 * size), dtype=np.uint64)
        return (words >> np.uint64(11)).astype(np.float64) / float(1 << 53)

    def permutation(self, n: int) -> np.ndarray:
        """A uniformly random permutation of range(n)."""
        if not self.is_secure:
            return self._rng.permutation(n)
        # Fisher-Yates needs sequential draws; sorting by 64-bit random keys is uniform up to ties,
        # which are resolved by a second key and are vanishingly rare.
        keys = (
            np.frombuffer(os.urandom(16 * n), dtype=np.uint64).reshape(n, 2)
            if n
            else np.empty((0, 2), np.uint64)
        )
        return order_by_keys(keys[:, 0], keys[:, 1])


PARALLEL_MIN_DRAWS = 2048  # below this (~10 ms of draws), one call beats a thread hand-off


DRAW_WORKERS = min(os.cpu_count() or 1, 4)


@cache
def _draw_pool() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(DRAW_WORKERS, thread_name_prefix="dpx-noise")


def _secure_draws(measurement, n: int, dtype) -> np.ndarray:
    """n independent draws of an OpenDP Laplace measurement over a vector domain (i64 discrete
    Laplace, or float Laplace), applied to a vector of zeros of `dtype`.

    Large vectors are split into one chunk per core and the chunks run in threads: OpenDP is
    called through ctypes, which releases the GIL while its Rust sampler works, so the draws
    run in parallel. Each draw is still OpenDP's exact sampler on OS entropy, independent of
    every other, so the joint distribution (and the privacy claim) is unchanged.
    """
    zeros = np.zeros(n, dtype=dtype)
    if DRAW_WORKERS < 2 or n < PARALLEL_MIN_DRAWS:
        return np.asarray(measurement(zeros), dtype=dtype)
    chunks = np.array_split(zeros, DRAW_WORKERS)
    parts = _draw_pool().map(measurement, chunks)
    return np.concatenate([np.asarray(p, dtype=dtype) for p in parts])


def order_by_keys(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """`np.lexsort((second, first))` (by `first`, then `second`, then position), computed as one
    sort of `first` plus a lexsort of the few rows whose `first` key is tied: several times
    faster on millions of random 64-bit keys, where ties are vanishingly rare."""
    first = np.asarray(first)
    order = np.argsort(first)
    ranked = first[order]
    tied = np.flatnonzero(ranked[1:] == ranked[:-1])
    if tied.size:
        spots = np.union1d(tied, tied + 1)  # the positions of every tied run, ascending
        rows = order[spots]
        order[spots] = rows[np.lexsort((rows, np.asarray(second)[rows], first[rows]))]
    return order


def round_to_lattice(values, lattice: float = 2.0**-10):
    """`values` rounded to the nearest multiple of `lattice` (see `Noise.lattice_laplace`)."""
    return np.round(np.asarray(values, dtype=np.float64) / lattice) * lattice


def _secure_integers(high: np.ndarray) -> np.ndarray:
    """Unbiased uniform integers in [0, high) from os.urandom (vectorised rejection sampling):
    a 64-bit word is accepted below the largest multiple of its bound that fits, then reduced
    modulo the bound. The first round covers every draw without index arrays, and a bound
    shared by all draws is used as a scalar (both only for speed: the same words give the same
    integers)."""
    flat = high.reshape(-1).astype(np.uint64)
    shared = bool(flat.size) and bool((flat == flat[0]).all())
    bound = flat[0] if shared else flat
    limit = (np.uint64(2**64 - 1) // bound) * bound
    words = np.frombuffer(os.urandom(8 * flat.size), dtype=np.uint64)
    out = words % bound
    todo = np.flatnonzero(words >= limit)
    while todo.size:
        words = np.frombuffer(os.urandom(8 * todo.size), dtype=np.uint64)
        ok = words < (limit if shared else limit[todo])
        out[todo[ok]] = words[ok] % (bound if shared else bound[todo[ok]])
        todo = todo[~ok]
    return out.astype(np.int64).reshape(high.shape)
