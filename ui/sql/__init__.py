"""Steps of the sql page."""
