"""Reading releases and refusals back, typed: the mechanism rows become the mechanism objects
that drew (`core.privacy.mechanisms.from_json`). A mixin of `core.registry.registry.Registry`."""

from __future__ import annotations

import json

from core.errors import InputError
from core.privacy.recorded import from_json
from core.registry.models import Refusal, Release, RunKind, Status
from core.registry.storage import decode


class ReleaseReader:
    """`release`, `releases` and `refusals` (uses the registry's `_guard`, `_con`, `_read`)."""

    _RELEASE_COLUMNS = (
        "id, time, tool, dataset, kind, status, params, mechanisms, epsilon, delta, mode, "
        "artefact_sha256, artefact, note, privacy, worker, artefact_bytes, artefact_note"
    )

    @staticmethod
    def _release_from(row, body: bool = True) -> Release:
        """`row` as a typed `Release`; without `body`, column 12 says only whether a body is
        stored (the list views' case: a body can be megabytes, decoded for nothing)."""
        return Release(
            id=row[0],
            time=row[1],
            tool=row[2],
            dataset=row[3],
            kind=RunKind(row[4]),
            status=Status(row[5]),
            params=json.loads(row[6]),
            mechanisms=tuple(from_json(m) for m in json.loads(row[7])),
            epsilon=row[8],
            delta=row[9],
            mode=row[10],
            artefact_sha256=row[11],
            artefact=decode(row[12]) if body else None,
            body_kept=row[12] is not None if body else bool(row[12]),
            note=row[13],
            privacy=json.loads(row[14]),
            worker=row[15] or "",
            artefact_bytes=row[16],
            artefact_note=row[17] or "",
        )

    def _release(self, con, release_id: int) -> Release:
        row = con.execute(
            f"SELECT {self._RELEASE_COLUMNS} FROM releases WHERE id=?", (int(release_id),)
        ).fetchone()
        if row is None:
            raise InputError(f"no release with id {release_id} in {self.directory}.")
        return self._release_from(row)

    def release(self, release_id: int) -> Release:
        with self._guard():
            return self._release(self._con, release_id)

    def releases(
        self,
        dataset: str | None = None,
        kind: RunKind | None = None,
        *,
        session: str | None = None,
        statuses: tuple[Status, ...] | None = None,
        bodies: bool = True,
    ) -> list[Release]:
        """Releases in id order, filtered in SQL (only the rows asked for are decoded: a page
        asks on every rerun, and the registry keeps growing): by dataset, kind, the app
        session recorded in their params (`params.session`), and status. `bodies=False`: the
        artefacts are not read (`artefact` None, `body_kept` says whether one is stored)."""
        columns = self._RELEASE_COLUMNS
        if not bodies:
            columns = columns.replace(", artefact,", ", artefact IS NOT NULL,")
        sql = f"SELECT {columns} FROM releases WHERE 1=1"
        args: list = []
        if dataset is not None:
            sql += " AND dataset=?"
            args.append(dataset)
        if kind is not None:
            sql += " AND kind=?"
            args.append(kind.value)
        if session is not None:
            sql += " AND json_extract(params, '$.session')=?"
            args.append(session)
        if statuses is not None:
            sql += f" AND status IN ({', '.join('?' for _ in statuses)})"
            args.extend(s.value for s in statuses)
        return [self._release_from(r, bodies) for r in self._read(sql + " ORDER BY id", args)]

    def refusals(self, dataset: str | None = None) -> list[Refusal]:
        sql, args = "SELECT * FROM refusals", ()
        if dataset is not None:
            sql, args = sql + " WHERE dataset=?", (dataset,)
        return [
            Refusal(r[0], r[1], r[2], r[3], r[4], json.loads(r[5]))
            for r in self._read(sql + " ORDER BY id", args)
        ]
