"""Steps of the pp page."""
