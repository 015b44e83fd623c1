"""Per-tool report sections: the guarantee in plain words, public accuracy, figures, tables."""

from __future__ import annotations

import math
from html import escape

from core.registry.models import Release, RunKind
from core.reports.svg import bar_chart, leaves_map

MAX_TABLE_ROWS = 500


def table(headers: list[str], rows: list[list], cls: str = "") -> str:
    head = "".join(f"<th>{escape(str(h))}</th>" for h in headers)
    body = "".join(
        "<tr>" + "".join(f"<td>{escape(_cell(c))}</td>" for c in row) + "</tr>"
        for row in rows[:MAX_TABLE_ROWS]
    )
    more = (
        f'<p class="muted">{len(rows) - MAX_TABLE_ROWS} more rows are in the registry.</p>'
        if len(rows) > MAX_TABLE_ROWS
        else ""
    )
    return f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{more}'


def _cell(v) -> str:
    if isinstance(v, float):
        return f"{v:.6g}"
    return "—" if v is None else str(v)


def is_spatial(release: Release) -> bool:
    """A location histogram (`dpx htf`, or `dpx release` with any method)."""
    return release.tool not in ("sql", "pp")


def guarantee(release: Release) -> str:
    """The privacy guarantee in plain words: unit, ε, δ, what it means and does not mean."""
    eps, delta = release.epsilon, release.delta
    if release.tool == "pp":
        p = release.privacy
        claim = (
            f"<p><b>({escape(str(p.get('rho1')))}, {escape(str(p.get('rho2')))})-privacy</b> "
            "(PP balancing; unit: one record). An adversary whose belief that a record has a given "
            f"sensitive value is at most ρ1 = {escape(str(p.get('rho1')))} before seeing the "
            f"published table cannot reach more than ρ2 = {escape(str(p.get('rho2')))} after.</p>"
        )
        means_not = [
            "It is <b>not</b> ε-differential privacy: no ε is charged and it does not compose "
            "with the other releases of this dataset.",
            "Sensitive values whose prior already exceeds ρ1 are not protected, by design.",
            "Sub-table sizes are published exactly; membership of a sub-table reveals that the "
            "record's value is one of that sub-table's values.",
        ]
    else:
        unit = (
            "one point (one row): a person with k points is protected at k × ε"
            if is_spatial(release)
            else f"one privacy unit (column <code>{escape(str(release.params.get('uid')))}</code>)"
        )
        claim = (
            f"<p><b>({eps:g}, {delta:g})-differential privacy</b>, unit: {unit}. Adding or "
            f"removing one unit's data changes the probability of any outcome of this release "
            f"by at most a factor e<sup>ε</sup> = {math.exp(min(eps, 700)):.4g}"
            + (f", except with probability δ = {delta:g}" if delta else "")
            + ".</p>"
        )
        means_not = [
            "It does not hide facts about the population: aggregates are meant to be learned.",
            "Releases add up (basic composition: sums of ε and δ); this dataset's total spend is "
            "what bounds the leakage, not this release alone.",
            "Intervals describe the added noise only, not sampling error or data errors.",
            "It does not cover a person who appears under several units.",
        ]
    if release.mode == "seeded":
        means_not.insert(
            0,
            "<b>Seeded (demo) noise</b>: reproducible by anyone with the seed, so this output "
            "carries <b>no</b> privacy guarantee; it is not a release.",
        )
    if release.kind is RunKind.UNREGISTERED:
        means_not.append(
            "This was an unregistered run (files given directly): it was recorded but not "
            "limited by a dataset budget."
        )
    items = "".join(f"<li>{m}</li>" for m in means_not)
    return claim + f"<p>What it does not mean:</p><ul>{items}</ul>"


def mechanism_table(release: Release) -> str:
    rows = [
        [m.label, m.cost.epsilon, m.cost.delta, m.sensitivity, m.scale] for m in release.mechanisms
    ]
    if not rows:
        return '<p class="muted">No noise mechanism (no ε charged).</p>'
    rows.append(["total (basic composition)", release.epsilon, release.delta, None, None])
    return table(["mechanism", "ε", "δ", "sensitivity", "scale"], rows, "mechanisms")


def _laplace_half_width_95(scale: float) -> float:
    return scale * math.log(20.0)  # P(|Lap(b)| > b ln 20) = 5%


def accuracy(release: Release) -> str:
    """Accuracy computable from public parameters only."""
    art = release.artefact or {}
    if release.params.get("method") != "htf" and is_spatial(release):
        return (
            "<p>The noise scale of each mechanism follows from its ε in the mechanism table; "
            "this report computes intervals for HTF's Laplace node counts only.</p>"
        )
    if release.params.get("method") == "htf":
        rows = []
        for m in release.mechanisms:
            if "counts" in m.label and m.cost.epsilon > 0:
                scale = m.scale or 1.0 / m.cost.epsilon
                rows.append([m.label, m.cost.epsilon, scale, _laplace_half_width_95(scale)])
        if not rows:
            return '<p class="muted">Per-level shares not recorded.</p>'
        return (
            "<p>Each node count at a level gets Laplace noise of scale 1/ε (sensitivity 1). "
            "95% of noise draws fall within ± the half-width:</p>"
            + table(["level", "ε", "Laplace scale", "95% half-width"], rows, "accuracy")
        )
    if release.tool == "sql":
        th = art.get("threshold") or {}
        parts = [
            "<p>Every released value carries its 95% noise-only interval in the result table.</p>"
        ]
        if th.get("integer") is not None and th.get("scale"):
            T, s = int(th["integer"]), float(th["scale"])
            a = math.exp(-1.0 / s)
            rows = []
            for n in sorted({max(1, int(T + k * s)) for k in (-3, -2, -1, 0, 1, 2, 3, 4)}):
                d = T - n
                keep = a**d / (1 + a) if d >= 1 else 1 - a ** (1 - d) / (1 + a)
                rows.append([n, keep])
            parts.append(
                f"<p>Partition selection: a group is released when its noisy unit count is ≥ "
                f"T = {T} (discrete Laplace, scale {s:.4g}). Probability that a group with n "
                "units survives:</p>" + table(["units n", "P(released)"], rows, "survival")
            )
        else:
            parts.append("<p>Public groups: every public key is released (no threshold).</p>")
        return "".join(parts)
    return (
        "<p>PP perturbs records with the published retention probabilities; there is no "
        "additive noise interval.</p>"
    )


def figures(release: Release) -> str:
    art = release.artefact
    if not art:
        return f'<p class="muted">No artefact attached (status: {release.status.value}).</p>'
    if is_spatial(release):
        grid = art.get("grid", {})
        leaves = art.get("leaves", [])
        rows = [
            [lf["row0"], lf["row1"], lf["col0"], lf["col1"], lf["noisy_count"]] for lf in leaves
        ]
        return leaves_map(
            leaves,
            int(grid.get("rows", 1)),
            int(grid.get("cols", 1)),
            "Released leaves (noisy density)",
        ) + (
            f"<p>Grid {grid.get('rows')} × {grid.get('cols')} over bbox "
            f"{escape(str(grid.get('bbox')))} (public).</p>"
            + table(["row0", "row1", "col0", "col1", "noisy count"], rows, "result")
        )
    if release.tool == "sql":
        cols, data = art.get("columns", []), art.get("rows", [])
        ci = art.get("ci95", {})
        out = ""
        numeric = [c for c in cols if c in ci]
        if numeric and data:
            j = cols.index(numeric[0])
            keys = [i for i, c in enumerate(cols) if c not in ci]
            labels = [
                " / ".join(str(r[i]) for i in keys) or f"row {n + 1}" for n, r in enumerate(data)
            ]
            values = [float(r[j]) if isinstance(r[j], (int, float)) else 0.0 for r in data]
            out += bar_chart(
                labels[:40],
                values[:40],
                f"{numeric[0]} (± 95% noise interval)",
                ci[numeric[0]][:40],
            )
        shown = []
        for n, r in enumerate(data):
            shown.append(
                [
                    f"{v:.6g} ± {ci[c][n]:.3g}"
                    if c in ci and isinstance(v, float) and ci[c][n] is not None
                    else v
                    for c, v in zip(cols, r, strict=True)
                ]
            )
        return out + table(cols, shown, "result")
    groups = art.get("groups", [])
    sizes = [float(sum(g.values())) for g in groups]
    return bar_chart(
        [f"sub-table {i + 1}" for i in range(len(groups))], sizes, "Published sub-table sizes"
    ) + table(
        ["sub-table", "size", "sensitive values in it"],
        [
            [i + 1, int(n), ", ".join(map(str, g))]
            for i, (g, n) in enumerate(zip(groups, sizes, strict=True))
        ],
        "result",
    )
