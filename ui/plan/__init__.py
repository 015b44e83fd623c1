"""The Plan step of every tool page and the budget plan of the Releases page: the app's face of
`core.planning` (the same planners `dpx plan` runs). A plan reads no raw value and charges
nothing, so every step works in analyst mode; the location planner's pilot is the one
exception, a charged release of its own (`core.governance.planning.governed_pilot`)."""
