"""JSON and text views of a plan: the CLI contract (`dpx balance --json`) and the run report.

Exact quantities are strings "a/b" (or "n" when whole); counts are ints.
"""

from __future__ import annotations

from core.balancing.names import STATED_LIMITS, frac
from core.balancing.phase1 import TraceRow, iter_orders
from core.balancing.plan import STATUS_NOTHING, PartitionPlan
from core.balancing.subtables import SubTable

MERGE_LABEL = "project design (not from the thesis): greedy merge while sum n_i p_i increases"

INTERNAL_LABEL = (
    "INTERNAL - NOT FOR RELEASE: exact counts of the original table (T'' counts, group "
    "contents, sub-table sizes and domains as computed from the raw data). Keep with the data "
    "owner; publish only the published CSV and its metadata."
)
INTERNAL_REPORT_NAME = "INTERNAL_pp_run_report_not_for_release.json"


def internal_report(plan: PartitionPlan, **extra) -> dict:
    """The run report (plan, trace and `extra` such as noise and publication metadata) with the
    INTERNAL label as its first key. Not a release: it holds the original table's exact counts."""
    return {"internal": INTERNAL_LABEL, **plan_json(plan), **extra}


def _aligned(header: list[str], rows: list[list[str]]) -> list[str]:
    """Left-aligned columns, each as wide as its widest cell, separated by two spaces."""
    widths = [max(len(c) for c in col) for col in zip(header, *rows, strict=True)]
    return [
        "  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True)).rstrip()
        for line in [header, *rows]
    ]


def subtable_json(s: SubTable) -> dict:
    return {
        "size": s.size,
        "m": s.m,
        "rho1_i": frac(s.rho1),
        "gamma": frac(s.gamma),
        "p": frac(s.p),
        "q": frac(s.q),
        "worst_posterior": frac(s.worst_posterior),
        "admissible": s.admissible,
        "bound": frac(s.bound) if s.bound is not None else "n/a",
        "counts": dict(s.counts),
    }


def iteration_json(row: TraceRow, order: tuple[tuple[str, int], ...]) -> dict:
    return {
        "j": row.j,
        "t0_size": row.n0,
        "order": [v for v, _ in order],
        "order_counts": [c for _, c in order],
        "f1": row.f1[1],
        "f1_value": row.f1[0],
        "f_beta": row.fb[1],
        "f_beta_value": row.fb[0],
        "f_beta_plus_1": row.fb1[1],
        "f_beta_plus_1_value": row.fb1[0],
        "phi": frac(row.phi),
        "branch": row.branch,
        "h": row.h,
        "group": dict(row.group),
        "t0_size_after": row.n_after,
        "f1_after": row.f1_after,
        "balanced_after": row.balanced_after,
    }


def plan_json(plan: PartitionPlan) -> dict:
    """The `dpx balance --json` object (also the page's run report)."""
    nothing = plan.status == STATUS_NOTHING
    whole, other = plan.lemma5
    out: dict = {
        "n": plan.n,
        "rho1": frac(plan.rho1),
        "rho2": frac(plan.rho2),
        "status": plan.status,
        "beta": plan.beta,
        "beta_prime": plan.beta_prime,
        "f_max": plan.f_max,
        "sa_prime": list(plan.sa_prime),
        "t_double_prime": dict(plan.t2),
        "canonical_order": list(plan.canonical),
        "canonical_order_source": "given" if plan.canonical_given else "count, then natural sort",
        "tie_policy": plan.tie_policy,
        "merge_policy": plan.merge_policy,
        "iterations": []
        if nothing
        else [
            iteration_json(r, o)
            for r, o in zip(plan.phase1.trace, iter_orders(plan.phase1), strict=True)
        ],
        "quotas": plan.distribution.quotas if plan.distribution else [0] * len(plan.groups),
        "residue": plan.distribution.residue if plan.distribution else 0,
        "t_double_prime_order": plan.distribution.t2_order if plan.distribution else [],
        "groups": [dict(g) for g in plan.groups],
        "lemma5_bounds": {
            "whole_number": frac(whole) if whole is not None else "n/a",
            "otherwise": frac(other) if other is not None else "n/a",
        },
        "whole_table": subtable_json(plan.whole_table) if plan.whole_table else {"p": None},
        "notes": list(plan.notes),
        "stated_limits": list(STATED_LIMITS),
    }
    partition = [subtable_json(s) for s in plan.subtables]
    if plan.merge_policy != "none":
        out["merge_label"] = MERGE_LABEL
        out["merge_steps"] = [
            {"merged": [s.i + 1, s.j + 1], "jaccard": frac(s.jaccard), "gain": frac(s.gain)}
            for s in plan.merge_steps
        ]
    if plan.refused:
        out["refused"] = plan.reason
        out["fallback"] = {
            "description": "single-table fallback: T is the only sub-table",
            **subtable_json(plan.whole_table),
        }
        out["partition_subtables"] = partition
        out["subtables"] = [subtable_json(plan.whole_table)]
    elif nothing:
        out["refused"] = plan.reason
        out["subtables"] = []
    else:
        out["subtables"] = partition
    return out


def plan_text(plan: PartitionPlan) -> str:
    """Human-readable trace and summary (the CLI without --json)."""
    lines = [
        f"|T| = {plan.n}, rho1 = {plan.rho1}, rho2 = {plan.rho2}",
        f"SA' = {{{', '.join(plan.sa_prime)}}}; T'' = "
        + (", ".join(f"{v}:{c}" for v, c in plan.t2.items()) or "empty"),
    ]
    if plan.status == STATUS_NOTHING:
        return "\n".join([*lines, plan.reason])
    lines.append(f"f_max = {plan.f_max}, beta = {plan.beta}, beta' = {plan.beta_prime}")
    lines.append("")
    trace_rows = []
    for r in plan.phase1.trace:
        fb1 = f"{r.fb1[1]} ({r.fb1[0]})" if r.fb1[0] is not None else "0 (none)"
        trio = f"{r.f1[1]} ({r.f1[0]}) / {r.fb[1]} ({r.fb[0]}) / {fb1}"
        group = " ".join(f"{v}:{c}" for v, c in r.group.items())
        trace_rows.append([str(r.j), str(r.n0), trio, frac(r.phi), r.branch, str(r.h), group])
    trace_header = ["it", "|T0|", "f1 / f_beta / f_beta+1", "phi", "branch", "h", "group"]
    lines.extend(_aligned(trace_header, trace_rows))
    if plan.distribution:
        d = plan.distribution
        lines.append(f"\nT'' quotas {d.quotas}, residue {d.residue} -> last group")
    lines.append("")
    sub_rows = [
        [
            f"g{i}", str(s.size), str(s.m), frac(s.rho1), frac(s.gamma),
            frac(s.p) or "n/a", frac(s.worst_posterior) or "inadmissible",
        ]
        for i, s in enumerate(plan.subtables, 1)
    ]  # fmt: skip
    sub_header = ["sub-table", "n", "m", "rho1_i", "gamma", "p", "worst posterior"]
    lines.extend(_aligned(sub_header, sub_rows))
    w = plan.whole_table
    lines.append(f"whole table: rho1 = {w.rho1}, gamma = {w.gamma}, m = {w.m}, p = {w.p}")
    if plan.refused:
        lines.append(f"\nREFUSED: {plan.reason}")
    return "\n".join(lines)
