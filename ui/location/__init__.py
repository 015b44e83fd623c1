"""Steps of the location page."""
