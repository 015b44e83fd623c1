"""The location page's state as one typed object (issue 28): what a Build is asked for.

Pure (no Streamlit): the page builds one `LocationBuildRequest` per run from its widgets and the
public grid the points were binned on, and hands that object (never a dict) to the build, the
results, the evaluation, the tuning view and the HTF stepper. Two strings or dicts come out of it
at its edges only:

* `fingerprint()`: a stable text of every field, what a kept Build, evaluation or trace was made
  with (a different fingerprint marks them stale);
* `record()`: the JSON-able parameters the run report writes (the same keys and values the page
  recorded before the object existed). What each registry row records is
  `LocationParams.to_json()` of `location_params()` (the same object `dpx release` builds from
  its arguments) plus the page's `door`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field

from core.governance.origin import Origin
from core.privacy import Noise
from core.spatial.grid import Grid
from core.spatial.service import BBox, HTFOptions, LocationParams
from core.spatial.unit import Unit, unit_from
from ui.fingerprint import fingerprint as fingerprint_of
from ui.location.params import Columns, all_location_params

HTF_FLAGS = ("combine_pruned", "consistency", "cap_height")  # HTF's §2.10 modifications


@dataclass(frozen=True)
class LocationBuildRequest:
    """One Build of the location page as asked for: public parameters only.

    `epsilon` each release's ε; `htf` the sidebar's HTF options; `methods` the chosen methods in
    order; `columns` the coordinate columns, grid size and person column with K; `bbox` the
    public box chosen (None when `bbox_from_data`: a labelled seeded demo box derived from the
    data); `grid` the public grid the points were binned on; `data` the data choice's key;
    `seed` the demo noise's seed (None: secure noise)."""

    epsilon: float
    htf: HTFOptions
    methods: tuple[str, ...]
    columns: Columns
    bbox: BBox | None
    bbox_from_data: bool
    grid: Grid
    data: str
    seed: int | None = field(default=None)

    @classmethod
    def of(
        cls,
        epsilon: float,
        htf: HTFOptions | Mapping[str, float | int | bool | None],
        methods: Sequence[str],
        columns: Columns,
        bbox: Sequence[float] | None,
        from_data: bool,
        grid: Grid,
        data: str,
        noise: Noise,
    ) -> LocationBuildRequest:
        """The request from the page's widget values (typed here, once)."""
        return cls(
            epsilon=float(epsilon),
            htf=htf if isinstance(htf, HTFOptions) else HTFOptions(**dict(htf)),
            methods=tuple(methods),
            columns=columns,
            bbox=None if from_data or bbox is None else _bbox(bbox),
            bbox_from_data=bool(from_data),
            grid=grid,
            data=data,
            seed=noise.seed,
        )

    @property
    def noise(self) -> Noise:
        """A fresh noise source of the build's mode (seeded with `seed`, else secure)."""
        return Noise.from_seed(self.seed)

    @property
    def person(self) -> tuple[str, int | None] | None:
        """The person column and K, or None (the unit is one point)."""
        c = self.columns
        return (c.person, c.per_person) if c.person else None

    @property
    def unit(self) -> Unit:
        """The spatial unit the counts were bounded for (one point, or a person with K)."""
        column, k = self.person or (None, None)
        return unit_from(column, k)

    @property
    def htf_flags(self) -> tuple[str, ...]:
        """HTF's modifications switched on in the sidebar (empty: faithful to the paper)."""
        return tuple(f for f in HTF_FLAGS if getattr(self.htf, f))

    def location_params(self) -> tuple[LocationParams, ...]:
        """One `LocationParams` per method: what `prepare` checks and each registry row
        records (`ui.location.params`, the page's edge; the CLI builds the same object)."""
        return all_location_params(
            self.epsilon, self.htf, self.methods, self.columns, self.bbox, self.bbox_from_data
        )

    def door(self, session: str) -> Origin:
        """What the page adds to each registry row beside the method's `LocationParams`: the
        door, this browser session (so a reload finds what it paid for), the seed, the data."""
        return Origin.app(session, data=self.data, seed=self.seed)

    def record(self) -> dict[str, object]:
        """The JSON-able parameters of this build (the run report's `parameters`)."""
        person = list(self.person) if self.person else None
        return {
            "epsilon": self.epsilon, "methods": list(self.methods), "seed": self.seed,
            "mode": self.noise.mode, "htf": asdict(self.htf), "grid": [self.grid.ny, self.grid.nx],
            "bbox": list(self.grid.bbox), "lat": self.columns.lat, "lon": self.columns.lon,
            "bbox_from_data": self.bbox_from_data, "data": self.data, "person": person,
        }  # fmt: skip

    def fingerprint(self) -> str:
        """A stable text of the whole request: equal requests give equal fingerprints, a change
        in any field a different one (what marks a kept build or evaluation stale)."""
        return fingerprint_of(self)


def _bbox(values: Sequence[float]) -> BBox:
    x0, y0, x1, y1 = (float(v) for v in values)
    return (x0, y0, x1, y1)
