"""Markdown tables of Recommended's regret from bench/htf_regret.py runs (issue 20).

usage: .venv/bin/python bench/peers_regret_table.py METHODS.json AUTO.json [TITLE]

Per cell: the best method at full ε over every method of the methods run (UG, AG, PrivTree,
DAWA, HB, QuadTree and its leaf-count variant), each peer's MRE relative to that best, what
Recommended picked in each repetition, its regret (Recommended's mean MRE / the best method's
mean MRE over the same repetitions and queries) and Recommended / UG. Then the summary: median
and worst regret, cells above 1.25, cells worse than UG.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

import numpy as np


def table(methods_json: dict, auto_json: dict) -> tuple[str, dict]:
    autos = {(c["dataset"], c["epsilon"]): c for c in auto_json["cells"]}
    rows, regrets, vs_ug = [], [], []
    head = ("| dataset | N | ε | best (MRE) | AG | PrivTree | DAWA | HB | UG | Recommended picked "
            "| regret | Rec. / UG |\n|---|---|---|---|---|---|---|---|---|---|---|---|")  # fmt: skip
    for c in methods_json["cells"]:
        full = {k: float(np.mean(v)) for k, v in c["per_rep"].items() if "@" not in k}
        full["quadtree"] = min(full.pop("quadtree"), full.pop("quadtree-leaves", np.inf))
        best = min(full, key=full.get)
        a = autos[(c["dataset"], c["epsilon"])]
        auto = float(np.mean(a["per_rep"]["auto"]))
        reg, ug = auto / full[best], auto / full["ug"]
        regrets.append(reg)
        vs_ug.append(ug)
        picks = Counter(f["pick"] for f in a["features"])
        picked = ", ".join(f"{m} ×{k}" for m, k in picks.most_common())
        rel = [f"{full[m] / full[best]:.2f}" for m in ("ag", "privtree", "dawa", "hb", "ug")]
        mark = "**" if reg > 1.25 or ug > 1 else ""
        rows.append(f"| {c['dataset']} | {c['n']:,} | {c['epsilon']:g} | {best} ({full[best]:.3g}) | "
                    + " | ".join(rel) + f" | {picked} | {mark}{reg:.2f}{mark} | {ug:.2f} |")  # fmt: skip
    r = np.asarray(regrets)
    summary = {
        "cells": len(r), "median": float(np.median(r)), "worst": float(r.max()),
        "above_1_10": int((r > 1.10).sum()), "above_1_25": int((r > 1.25).sum()),
        "worse_than_ug": int((np.asarray(vs_ug) > 1).sum()), "max_vs_ug": float(max(vs_ug)),
    }  # fmt: skip
    return head + "\n" + "\n".join(rows), summary


def main() -> None:
    methods_json = json.loads(Path(sys.argv[1]).read_text())
    auto_json = json.loads(Path(sys.argv[2]).read_text())
    md, summary = table(methods_json, auto_json)
    if len(sys.argv) > 3:
        print(f"### {sys.argv[3]}\n")
    print(md)
    print()
    print(
        f"Median regret **{summary['median']:.2f}**, worst **{summary['worst']:.2f}** over "
        f"{summary['cells']} cells; {summary['above_1_10']} above 1.10, {summary['above_1_25']} "
        f"above 1.25; worse than UG in {summary['worse_than_ug']} (max Recommended / UG "
        f"{summary['max_vs_ug']:.2f})."
    )


if __name__ == "__main__":
    main()
