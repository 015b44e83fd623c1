"""DP SQL: SELECT WITH ANONYMIZATION / DIFFERENTIAL_PRIVACY rewritten to staged SQL.

The subpackages are the stages a query passes through, in order:

- `parse/`      text -> sqlglot tree (the DPSQL dialect) -> the typed IR (`parse.ir.DPQuery`);
- `check/`      one ordered tuple of named passes (`check.passes.CHECKS`), each refusing with
                a DPX rule code before any data is read;
- `plan/`       the ε split and every statistic's `core.privacy` mechanism (`plan.planner`);
- `aggregates/` one class per aggregate kind: its mechanisms, its per-unit and cross-unit SQL,
                its estimate (`aggregates.kinds.KINDS`);
- `sql/`        the staged SQL (per unit, bounded, clamped, across units) in four dialects;
- `execute/`    the engines (DuckDB, Spark) and the process-wide execution pool;
- `release/`    partition selection, noise and intervals, post-processing.

`core.dpsql.service` is the entry point other layers import (`prepare`, `check_before_charge`,
`explain`, `run`, `Prepared`, `QueryResult`, `stage_tables`; `demos.example_query` writes a
first query for any catalogue).
"""
