"""The PP sections of a report: the (ρ1, ρ2) claim, each sub-table's retention probability and
posterior bound, the published columns, and how the partition was planned."""

from __future__ import annotations

from html import escape

from core.balancing.record import PPArtefact
from core.registry import Release
from core.reports.common import cost_line, does_not_mean, table


def guarantee(release: Release, art: PPArtefact, dataset=None) -> str:
    claim = release.claim
    plan_eps = (
        " The partition into sub-tables was planned from noisy counts: "
        f"{escape(cost_line(release))}."
        if release.epsilon
        else ""
    )
    head = (
        f"<p><b>({escape(str(claim.rho1))}, {escape(str(claim.rho2))})-privacy</b> (PP "
        "balancing; unit: one record). An adversary whose belief that a record has a given "
        f"sensitive value is at most ρ1 = {escape(str(claim.rho1))} before seeing the published "
        f"table cannot reach more than ρ2 = {escape(str(claim.rho2))} after.{plan_eps}</p>"
    )
    limits = [
        "The perturbation is not ε-differential privacy; only the partition's plan, when "
        "planned from noisy counts, is ε-DP and composes with the dataset's other releases.",
        "Sensitive values whose prior already exceeds ρ1 are not protected, by design.",
        "A record's sub-table reveals that its value is one of that sub-table's values.",
        "Every column listed as published leaves unchanged; choose them with care.",
    ]
    return head + does_not_mean(release, limits)


def accuracy(release: Release, art: PPArtefact) -> str:
    rows = [
        [i + 1, len(s.domain), s.retention, s.rho1, s.posterior_bound]
        for i, s in enumerate(art.subtables)
    ]
    return (
        f"<p>{escape(art.plan)}. Each record keeps its value with the sub-table's retention "
        "probability p and otherwise takes a uniform value of the sub-table's domain; the worst "
        "posterior is computed from p and the sub-table's largest prior ρ1ᵢ.</p>"
        + table(
            ["sub-table", "domain size", "retention p", "ρ1ᵢ", "worst posterior (≤ ρ2)"],
            rows,
            "accuracy",
        )
    )


def figures(release: Release, art: PPArtefact) -> str:
    columns = ", ".join(art.published_columns)
    domains = [[i + 1, ", ".join(s.domain)] for i, s in enumerate(art.subtables)]
    return (
        f"<p>Published: {art.rows_published} records with the columns <b>{escape(columns)}</b> "
        f"(the perturbed attribute <b>{escape(art.sa)}</b> and the columns the data owner "
        "declared publishable; nothing else left).</p>"
        + table(["sub-table", "sensitive values in its domain"], domains, "result")
    )
