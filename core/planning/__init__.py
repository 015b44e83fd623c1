"""Plan before spending: from the accuracy a person needs to the ε each release costs.

One planner per tool works backwards from targets, reading the tools' own mechanism objects
(`sql`, `location`, `pp`); `budget` splits a dataset's remaining budget among intended releases
and tells later releases whether they were planned; `bounds` proposes contribution bounds
from a charged DP quantile. Planners read no raw value (a pilot is its own charged release),
so they work in analyst mode.
"""
