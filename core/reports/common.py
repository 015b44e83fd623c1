"""Pieces every report shares: tables with one spelling of missing, the mechanism table read
from the typed mechanism objects, and what a guarantee does not mean."""

from __future__ import annotations

import math
from html import escape

from core.governance.artefacts import MISSING
from core.privacy import DiscreteLaplace, Laplace, LatticeLaplace, Mechanism, NoisyThreshold
from core.registry import Release, RunKind

MAX_TABLE_ROWS = 500


def cell(v) -> str:
    """One table cell: numbers to 6 significant digits, every missing value as `MISSING`."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return MISSING
    if isinstance(v, float):
        return f"{v:.6g}"
    if isinstance(v, str) and v in ("NULL", "None", "nan", "NaN", "<NA>", "—"):
        return MISSING
    return str(v)


def table(headers: list[str], rows: list[list], cls: str = "") -> str:
    head = "".join(f"<th>{escape(str(h))}</th>" for h in headers)
    body = "".join(
        "<tr>" + "".join(f"<td>{escape(cell(c))}</td>" for c in row) + "</tr>"
        for row in rows[:MAX_TABLE_ROWS]
    )
    more = (
        f'<p class="muted">{len(rows) - MAX_TABLE_ROWS} more rows are in the registry '
        "(`dpx report` shows the first 500).</p>"
        if len(rows) > MAX_TABLE_ROWS
        else ""
    )
    return f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{more}'


def half_width_95(m: Mechanism) -> float | None:
    """The 95 % noise half-width a mechanism states (None where it has no additive interval)."""
    if isinstance(m, DiscreteLaplace | Laplace | LatticeLaplace):
        return float(m.half_width(0.95))
    return None


def mechanism_table(release: Release) -> str:
    """One row per mechanism that drew noise: what it measured, its kind, cost, sensitivity,
    scale and 95 % half-width; read from the typed objects the registry kept."""
    rows = []
    for m in release.mechanisms:
        note = ""
        if m.in_place_of:
            note = "drawn in place of: " + ", ".join(m.in_place_of)
        if isinstance(m, NoisyThreshold):
            note = f"threshold T = {m.threshold}" + (f"; reuses {m.reuses}" if m.reuses else "")
        rows.append(
            [
                m.label,
                m.kind.value,
                m.cost.epsilon,
                m.cost.delta,
                m.sensitivity,
                m.scale,
                half_width_95(m),
                note or None,
            ]
        )
    if not rows:
        return f'<p class="muted">No noise mechanism recorded ({charge_status(release)}).</p>'
    rows.append(
        [f"total (basic composition): {charge_status(release)}", None, release.epsilon,
         release.delta] + [None] * 4
    )  # fmt: skip
    return table(
        ["measures", "mechanism", "ε", "δ", "sensitivity", "scale", "95% half-width", "note"],
        rows,
        "mechanisms",
    ).replace(f"<td>{MISSING}</td>", "<td></td>")


def charge_status(release: Release) -> str:
    """Whether this run's (ε, δ) counts against a dataset budget, in words; one wording per
    `RunKind`, used by every line of a report that speaks of the charge."""
    if release.kind is RunKind.RELEASE:
        return f"charged to dataset {release.dataset}"
    if release.kind is RunKind.DEMO:
        return "not charged (seeded demo)"
    return "not charged (files given directly; recorded only)"


def cost_line(release: Release) -> str:
    """The (ε, δ) and the charge in words: "ε = 1, δ = 0, not charged (seeded demo)"."""
    return f"ε = {release.epsilon:g}, δ = {release.delta:g}, {charge_status(release)}"


def charged_value(release: Release) -> str:
    """The summary's 'charged' line: what was charged to which dataset, or why nothing was."""
    if release.kind is RunKind.RELEASE:
        return f"ε = {release.epsilon:g}, δ = {release.delta:g} to dataset {release.dataset}"
    return charge_status(release)


def dp_claim(release: Release, unit: str) -> str:
    eps, delta = release.epsilon, release.delta
    return (
        f"<p><b>({eps:g}, {delta:g})-differential privacy</b>, unit: {escape(unit)}. Adding or "
        "removing one unit's data changes the probability of any outcome of this release by at "
        f"most a factor e<sup>ε</sup> = {math.exp(min(eps, 700)):.4g}"
        + (f", except with probability δ = {delta:g}" if delta else "")
        + f". This (ε, δ) is {escape(charge_status(release))}.</p>"
    )


def does_not_mean(release: Release, items: list[str]) -> str:
    items = list(items)
    if release.mode == "seeded":
        items.insert(
            0,
            "<b>Seeded (demo) noise</b>: reproducible by anyone with the seed, so this output "
            "carries <b>no</b> privacy guarantee; it is not a release.",
        )
    if release.kind is RunKind.UNREGISTERED:
        items.append(
            "This was an unregistered run (files given directly): it was recorded but not "
            "limited by a dataset budget."
        )
    return "<p>What it does not mean:</p><ul>" + "".join(f"<li>{m}</li>" for m in items) + "</ul>"


DP_LIMITS = [
    "It does not hide facts about the population: aggregates are meant to be learned.",
    "Releases compose (under the dataset's accounting, basic or pld: see Composition); this "
    "dataset's total spend is what bounds the leakage, not this release alone.",
    "Intervals describe the added noise only, not sampling error or data errors.",
]
