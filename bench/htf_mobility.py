"""Synthetic mobility point sets for the held-out benchmark (documented generators, fixed seeds).

Two generators over a public 0.4 x 0.3 degree city box (CITY_BOX), neither used to design the
method choice:

* `epr_checkins`: check-ins of many people by the exploration-and-preferential-return model
  (Song, Koren, Wang, Barabási, Nature Physics 2010). Each person lives in a district (a mixture
  of Gaussian districts of different sizes and weights); at each step, with probability
  rho S^-gamma (S: distinct places visited so far) they explore — a jump whose length follows
  a power law with exponent beta (r0 U^(-1/(beta-1)), capped at half the box), in a uniform
  direction — else they return to a place already visited, chosen in proportion to past visits. Places are
  snapped to a 20 m lattice of venues, plus GPS jitter.
* `taxi_points`: taxi pickups and drop-offs by a gravity model: trip ends drawn from hotspots
  (a dense downtown, two stations, an airport outside the centre, and a diffuse residential
  spread), with each point jittered along the street grid (Manhattan jitter), so the points
  cluster on lines like GPS pickups do.

Both return (lon, lat) arrays; `person` ids for the check-ins are returned too (points per
person vary from a handful to a few hundred).
"""

from __future__ import annotations

import numpy as np

CITY_BOX = (10.0, 50.0, 10.4, 50.3)  # (minlon, minlat, maxlon, maxlat), a public box


def _to_box(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Unit-square coordinates to (lon, lat) in CITY_BOX (points outside are dropped later)."""
    x0, y0, x1, y1 = CITY_BOX
    return x0 + x * (x1 - x0), y0 + y * (y1 - y0)


def epr_checkins(
    n_people: int, seed: int, rho: float = 0.6, gamma: float = 0.21, beta: float = 1.55
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    centres = rng.uniform(0.15, 0.85, size=(7, 2))
    widths = rng.uniform(0.01, 0.08, size=7)
    weights = rng.dirichlet(np.full(7, 0.8))
    district = rng.choice(7, size=n_people, p=weights)
    homes = centres[district] + rng.normal(size=(n_people, 2)) * widths[district, None]
    steps = np.clip(rng.lognormal(3.0, 1.0, size=n_people).astype(int), 3, 400)
    xs, ys, person = [], [], []
    for p in range(n_people):
        places = [homes[p]]
        visits = [1.0]
        for _ in range(steps[p]):
            if rng.random() < rho * len(places) ** (-gamma):
                r = 0.002 * (1 - rng.random()) ** (-1 / (beta - 1))  # power-law jump length
                a = rng.uniform(0, 2 * np.pi)
                places.append(places[-1] + min(r, 0.5) * np.array([np.cos(a), np.sin(a)]))
                visits.append(1.0)
            else:
                w = np.asarray(visits)
                k = rng.choice(len(places), p=w / w.sum())
                visits[k] += 1.0
                places.append(places[k])
                visits.append(0.0)  # a return adds no new place (weight stays on the old one)
        pts = np.round(np.asarray(places) / 5e-5) * 5e-5  # venues on a ~20 m lattice
        pts += rng.normal(scale=2e-5, size=pts.shape)
        xs.append(pts[:, 0])
        ys.append(pts[:, 1])
        person.append(np.full(len(pts), p))
    lon, lat = _to_box(np.concatenate(xs), np.concatenate(ys))
    return lon, lat, np.concatenate(person)


def taxi_points(n_trips: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    hubs = np.array([[0.50, 0.52], [0.42, 0.47], [0.61, 0.55], [0.86, 0.18]])  # downtown,
    sigma = np.array([0.03, 0.006, 0.006, 0.004])  # two stations, the airport
    weights = np.array([0.55, 0.1, 0.08, 0.07])
    n_ends = 2 * n_trips
    kind = rng.choice(5, size=n_ends, p=[*weights, 1 - weights.sum()])
    pts = np.empty((n_ends, 2))
    hub = kind < 4
    pts[hub] = hubs[kind[hub]] + rng.normal(size=(hub.sum(), 2)) * sigma[kind[hub], None]
    pts[~hub] = rng.beta(3, 3, size=((~hub).sum(), 2))  # residential spread around the centre
    # Manhattan jitter: move along one street axis, so ends line up on a 100 m street grid
    along = rng.integers(0, 2, size=n_ends)
    grid = np.round(pts / 0.0025) * 0.0025
    pts[np.arange(n_ends), 1 - along] = grid[np.arange(n_ends), 1 - along]
    pts += rng.normal(scale=3e-5, size=pts.shape)
    return _to_box(pts[:, 0], pts[:, 1])
