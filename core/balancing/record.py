"""The record a PP publication leaves in the registry: typed, public by construction (the
published columns, the noisy plan's sub-tables with their retention probabilities and
posterior bounds, the claim in sentences), built from the publication's own metadata."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass(frozen=True)
class SubTableView:
    """One published sub-table: its domain, its retention probability p (exact), the largest
    prior ρ1ᵢ among its protected values and the worst-case posterior it allows."""

    domain: tuple[str, ...]
    retention: str
    rho1: str
    posterior_bound: str


@dataclass(frozen=True)
class PPArtefact:
    """Which columns left (the perturbed attribute and the owner's declared columns), how many
    rows the published file holds, the sub-tables and how the partition was planned."""

    sa: str
    published_columns: tuple[str, ...]
    rows_published: int
    subtables: tuple[SubTableView, ...]
    plan: str
    statement: tuple[str, ...] = ()
    tool: str = field(default="pp", init=False)

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> PPArtefact:
        return cls(
            sa=data["sa"],
            published_columns=tuple(data["published_columns"]),
            rows_published=int(data["rows_published"]),
            subtables=tuple(
                SubTableView(
                    domain=tuple(s["domain"]),
                    retention=s["retention"],
                    rho1=s["rho1"],
                    posterior_bound=s["posterior_bound"],
                )
                for s in data["subtables"]
            ),
            plan=data["plan"],
            statement=tuple(data.get("statement", ())),
        )


def pp_artefact(metadata: dict, rows_published: int) -> PPArtefact:
    """The record of a publication from its metadata (`publish.publication_metadata`)."""
    privacy = metadata["privacy"]
    delta = privacy.get("plan_delta") or 0.0
    plan = (
        f"Partition planned from DP-noised value counts (epsilon {privacy['plan_epsilon']:g}"
        + (f", delta {delta:.2g}" if delta else "")
        + f"; unit: {privacy['plan_unit']})"
        + (" — the single-table fallback" if metadata.get("single_table_fallback") else "")
    )
    return PPArtefact(
        sa=metadata["sa_column"],
        published_columns=tuple(metadata["published_columns"]),
        rows_published=int(rows_published),
        subtables=tuple(
            SubTableView(
                domain=tuple(str(v) for v in s["domain"]),
                retention=str(s["retention"]),
                rho1=str(s["rho1_i"]),
                posterior_bound=str(s["posterior_bound"]),
            )
            for s in metadata["subtables"]
        ),
        plan=plan,
        statement=tuple(privacy.get("statement", ())),
    )
