-- Clauses that select rows across units (sampling, QUALIFY, DISTINCT ON, LIMIT, ORDER BY).

-- @ sample_rows: a fixed-size sample chosen across units
$DP ANON_COUNT(*, 5) AS c FROM (SELECT uid FROM Orders USING SAMPLE 10 ROWS) x

-- @ sample_percent: a percentage sample (seeded by DuckDB)
$DP ANON_COUNT(*, 5) AS c FROM (SELECT uid FROM Orders USING SAMPLE 50 PERCENT (bernoulli, 42)) x

-- @ tablesample_top: TABLESAMPLE on the private table itself
$DP ANON_COUNT(*, 5) AS c FROM Orders TABLESAMPLE 10 ROWS

-- @ qualify_top: QUALIFY on the DP select
$DP dept, ANON_COUNT(*, 5) AS c FROM Users GROUP BY dept QUALIFY 1 = 1

-- @ distinct_on_cross_unit: DISTINCT ON a non-unit column keeps one unit per value
$DP dept, ANON_COUNT(*, 1) AS c FROM (SELECT DISTINCT ON (dept) uid, dept FROM Users ORDER BY dept, salary DESC) x GROUP BY dept

-- @ limit_in_subquery: ORDER BY salary LIMIT 1 picks the top earner
$DP ANON_SUM(salary, 0, 200) AS s FROM (SELECT uid, salary FROM Users ORDER BY salary DESC LIMIT 1) x

-- @ offset_in_subquery: OFFSET shifts which units survive
$DP ANON_COUNT(*, 1) AS c FROM (SELECT uid FROM Orders ORDER BY uid LIMIT 5 OFFSET 3) x

-- @ distinct_subquery_no_unit: SELECT DISTINCT without the unit
$DP ANON_COUNT(*, 1) AS c FROM (SELECT DISTINCT item FROM Orders) x

-- @ group_by_subquery_no_unit: an inner GROUP BY merging units
$DP ANON_SUM(t, 0, 1000) AS s FROM (SELECT item, SUM(amount) AS t FROM Orders GROUP BY item) x

-- @ having_subquery_cross_unit: HAVING over a cross-unit inner aggregate
$DP ANON_COUNT(*, 1) AS c FROM (SELECT uid FROM Orders GROUP BY uid HAVING COUNT(*) > (SELECT 1)) x

-- @ grouping_sets: GROUPING SETS / ROLLUP / CUBE on the DP select
$DP dept, ANON_COUNT(*, 5) AS c FROM Users GROUP BY ROLLUP (dept)

-- @ order_by_post: ORDER BY on released values is post-processing (must stay DP)
$DP dept, ANON_COUNT(*, 5) AS c FROM Users GROUP BY dept ORDER BY c DESC LIMIT 1

-- @ having_post: HAVING on released values
$DP dept, ANON_SUM(salary, 0, 200) AS s FROM Users GROUP BY dept HAVING s > 0

-- @ pivot_private: PIVOT on a private table
$DP ANON_COUNT(*, 5) AS c FROM Orders PIVOT (SUM(amount) FOR item IN ('pen', 'ink'))

-- @ unpivot_private: UNPIVOT multiplies rows
$DP ANON_COUNT(*, 5) AS c FROM (UNPIVOT Orders ON amount, qty INTO NAME k VALUE v) x
