"""One self-contained HTML file per release: inline CSS and SVG, no scripts, no external
references (it opens offline from file://)."""

from __future__ import annotations

import json
import platform
from html import escape
from importlib import metadata
from pathlib import Path

import core.reports.common as common
import core.reports.composition as composition_report
import core.reports.location as location
import core.reports.plan as plan_report
import core.reports.pp as pp
import core.reports.sql as sql
from core import __version__
from core.balancing.record import PPArtefact
from core.dpsql.record import SqlArtefact
from core.errors import InputError
from core.files import write_text
from core.governance.artefacts import artefact_of
from core.privacy.composition import cumulative
from core.registry import Registry, Release, RunKind, Tool
from core.spatial.record import LocationArtefact

_CSS = """
body{font-family:system-ui,sans-serif;max-width:1000px;margin:2em auto;padding:0 1em;color:#222}
h1{font-size:1.5em}h2{font-size:1.15em;border-bottom:1px solid #ddd;padding-bottom:.2em;margin-top:1.6em}
table{border-collapse:collapse;margin:.5em 0;font-size:.9em}
td,th{border:1px solid #ccc;padding:.25em .5em;text-align:left;vertical-align:top}
th{background:#f3f3f3}.muted{color:#777}.warn{background:#fff3cd;border:1px solid #e0b000;padding:.6em}
svg text{font-size:11px;font-family:system-ui,sans-serif}.fig-title{font-weight:bold;font-size:12px}
code{background:#f3f3f3;padding:0 .2em}
.map-row{display:flex;flex-wrap:wrap;gap:1em;align-items:flex-start}
.map-note{flex:1 1 220px;max-width:340px;font-size:.92em;border-left:3px solid #4c78a8;padding-left:.7em}
"""

_PACKAGES = ("numpy", "pandas", "duckdb", "sqlglot", "opendp")


def versions() -> dict[str, str]:
    out = {"dp-explorer": __version__, "python": platform.python_version()}
    for name in _PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return out


def _what(release: Release) -> str:
    kind = {
        RunKind.RELEASE: f"a release of registered dataset <b>{escape(str(release.dataset))}</b>",
        RunKind.UNREGISTERED: "an unregistered run (files given directly by the data owner)",
        RunKind.DEMO: "a seeded demo run (not a release)",
    }[release.kind]
    return f"<p>{_TOOL_NAMES.get(release.tool, escape(release.tool))}: {kind}.</p>"


_TOOL_NAMES = {
    Tool.LOCATION.value: "location histogram",
    Tool.SQL.value: "DP SQL query result",
    Tool.PP.value: "PP publication",
}

_SECTIONS = {LocationArtefact: location, SqlArtefact: sql, PPArtefact: pp}


def _unit(release: Release, dataset=None) -> str:
    """The unit in words: the location sections follow the dataset's declared unit."""
    art = artefact_of(release)
    if isinstance(art, LocationArtefact):
        return location.unit_words(art, dataset)
    row_is_unit = dataset is not None and dataset.row_is_unit
    if art is None and release.tool == Tool.LOCATION and row_is_unit:
        return location.ROW_IS_UNIT
    return release.claim.unit


def _sections(release: Release, dataset=None) -> list[str]:
    """Guarantee, accuracy and result, rendered from the typed artefact of the record."""
    art = artefact_of(release)
    if art is None:
        unit = _unit(release, dataset)
        note = (
            f'<p class="muted">No result is attached (status: {release.status.value}'
            + (" — charged, never delivered" if release.status.value != "released" else "")
            + ").</p>"
        )
        if release.artefact_note:  # computed, its body not kept (core.registry.storage)
            note = (
                f'<p class="muted">Result {escape(release.artefact_note)}: the registry '
                "keeps this run's record only (its artefact's SHA-256 is above).</p>"
            )
        return [
            "<h2>Privacy guarantee</h2>",
            common.dp_claim(release, unit) + common.does_not_mean(release, common.DP_LIMITS),
            "<h2>Mechanisms</h2>",
            common.mechanism_table(release),
            "<h2>Result</h2>",
            note,
        ]
    module = _SECTIONS[type(art)]
    return [
        "<h2>Privacy guarantee</h2>",
        module.guarantee(release, art, dataset),
        "<h2>Mechanisms</h2>",
        common.mechanism_table(release),
        "<h2>Accuracy (from public parameters)</h2>",
        module.accuracy(release, art),
        "<h2>Result</h2>",
        module.figures(release, art),
    ]


def render_report(
    release: Release,
    dataset_status: dict | None = None,
    planned: plan_report.PlannedVsRealized | None = None,
    dataset=None,
    composed: str | None = None,
) -> str:
    """The report of `release` as one HTML string, rendered from its registry record only.
    `dataset_status` (spent/total) is shown when given, `planned` (the saved budget plan
    the release falls under, from registry records) as a "Planned vs realized" section, and
    `dataset` (the registry's `Dataset`) gives the declared unit the guarantee names;
    `composed` is the "Composition" section's HTML (`core.reports.composition`)."""
    r = release
    summary = [
        ["release id", r.id],
        ["time (UTC)", r.time],
        ["tool", r.title],
        ["dataset", r.dataset or "(unregistered)"],
        ["unit", _unit(r, dataset)],
        # a failure's message may depend on the data: reports (for stakeholders) withhold it
        ["status", r.status.value + (" — computation failed after the charge" if r.note else "")],
        ["privacy cost (ε, δ)", common.cost_line(r)],
        ["charged", common.charged_value(r)],
        ["noise mode", r.mode],
        ["artefact SHA-256", r.artefact_sha256],
    ]
    if dataset_status:
        summary.append(
            [
                f"dataset budget ({dataset.accounting.value if dataset else 'basic'} accounting)",
                f"ε spent {dataset_status['epsilon_spent']:g} of "
                f"{dataset_status['epsilon_total']:g}; δ spent "
                f"{dataset_status['delta_spent']:g} of {dataset_status['delta_total']:g}",
            ]
        )
    banner = (
        '<p class="warn">Seeded (reproducible demo) noise — not for real releases; no privacy '
        "guarantee.</p>"
        if r.mode == "seeded"
        else ""
    )
    params = [[k, json.dumps(v) if not isinstance(v, str) else v] for k, v in r.params.items()]
    body = "".join(
        [
            f"<h1>Release #{r.id}: {escape(r.title)}"
            + (f" on {escape(r.dataset)}" if r.dataset else "")
            + "</h1>",
            banner,
            "<h2>What was released</h2>",
            _what(r),
            common.table(["field", "value"], summary, "summary"),
            *(
                []
                if planned is None
                else ["<h2>Planned vs realized</h2>", plan_report.section(r, planned)]
            ),
            *([] if composed is None else ["<h2>Composition</h2>", composed]),
            *_sections(r, dataset),
            "<h2>Parameters</h2>",
            common.table(["parameter", "value"], params, "params"),
            "<h2>Versions</h2>",
            common.table(
                ["software", "version"], [[k, v] for k, v in versions().items()], "versions"
            ),
        ]
    )
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>DP Explorer release #{r.id}</title><style>{_CSS}</style></head>"
        f"<body>{body}</body></html>\n"
    )


def write_report(path: str | Path, html_text: str) -> Path:
    """Write through a temporary file so a failure never leaves a partial report."""
    path = Path(path)
    if path.suffix.lower() not in (".html", ".htm"):
        raise InputError(f"--out must end in .html, got '{path}'.")
    write_text(path, html_text)  # core.files: whole or nothing, one-line InputError
    return path


def report_html(registry: Registry, release_id: int) -> str:
    release = registry.release(release_id)
    status = planned = d = composed = None
    if release.dataset is not None:
        d = registry.dataset(release.dataset)
        eps, delta = registry.spent(d.name)
        status = {
            "epsilon_spent": eps,
            "epsilon_total": d.policy.epsilon_total,
            "delta_spent": delta,
            "delta_total": d.policy.delta_total,
        }
        planned = plan_report.planned_vs_realized(
            release, registry.plans(d.name), registry.releases(d.name)
        )
        if release.kind is RunKind.RELEASE:
            upto = [x for x in registry.charged_releases(d.name) if x.id <= release.id]
            points = cumulative(upto, d.policy.delta_total, composition_report.MAX_REPORT_POINTS)
            composed = composition_report.section(points, d.policy.delta_total, d.accounting.value)
    return render_report(release, status, planned, d, composed)
