"""One palette for every chart and table that colours location-histogram methods (MRE chart,
tuning curves, budget bars, map layers' outlines): a method has the same colour everywhere,
and no two methods share one. "Recommended (private choice)" is black — never a blue that
could be mistaken for the kd-tree's.

HTF and its modified variants are reds and oranges, the quadtree family browns, the grids
green and purple, the kd-trees blue, cyan and indigo, the references greys.
"""

from __future__ import annotations

METHOD_COLOURS: dict[str, str] = {
    "auto": "#111111",  # Recommended (private choice)
    "htf": "#d62728",
    "htf+": "#ff7f0e",
    "htf-combine": "#ff9896",
    "htf-consistency": "#ffbb78",
    "htf-cap": "#f7b6d2",
    "kdtree-geo": "#1f77b4",
    "kdtree-uniform": "#17becf",
    "kdtree-hybrid": "#393b79",
    "ug": "#2ca02c",
    "ag": "#9467bd",
    "quadtree": "#8c564b",
    "quadtree-leaves": "#c49c94",
    "privtree": "#e377c2",
    "privelet": "#bcbd22",
    "dawa": "#006d2c",
    "hb": "#8b008b",
    "identity": "#7f7f7f",
    "uniform": "#c7c7c7",
}
# for a method added later and not listed yet: still distinct from the listed ones
SPARE_COLOURS = ("#98df8a", "#c5b0d5", "#9edae5", "#dbdb8d", "#aec7e8", "#e7ba52")


def method_colour(method: str) -> str:
    """The method's colour (the same in every chart)."""
    if method in METHOD_COLOURS:
        return METHOD_COLOURS[method]
    return SPARE_COLOURS[sum(map(ord, method)) % len(SPARE_COLOURS)]
