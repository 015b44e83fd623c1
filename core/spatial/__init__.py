"""Location histograms: HTF and baselines over a grid of lat/lon points."""
