"""Public limits every tool shares, stated once (no imports: the CLI's argument types read them
without loading a capability library)."""

# The smallest ε a release may ask for, for every tool: below it a mechanism's noise scale (the
# sensitivity over a share of ε) leaves the range the samplers and the accuracy arithmetic can
# represent (a variance of 1e300² overflows; a noisy threshold at that scale never finished), so
# a smaller ε could fail after its charge or hang.
EPSILON_MIN = 1e-6
