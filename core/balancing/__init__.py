"""PP balancing and small-domain randomization (the PP thesis, Section 4.3)."""
