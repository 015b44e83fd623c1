-- Controls: ordinary DP queries that must release and stay within the contract on every victim.

-- @ count_rows_by_dept: count rows per department
$DP dept, ANON_COUNT(*, 5) AS c FROM Users GROUP BY dept

-- @ count_units_by_item: count distinct units per item
$DP item, ANON_COUNT(DISTINCT uid) AS n FROM Orders GROUP BY item

-- @ sum_amount_by_item: clamped sum per item, victim's 1e6 amounts clamp to 100
$DP item, ANON_SUM(amount, 0, 100) AS s FROM Orders GROUP BY item

-- @ avg_salary: clamped average, salary 150 beyond the bound
$DP ANON_AVG(salary, 0, 100) AS a FROM Users

-- @ var_salary: variance
$DP ANON_VAR(salary, 0, 100) AS v FROM Users

-- @ stddev_amount_by_dept: stddev over a join
SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1, delta = 1e-5, max_groups_contributed = 2) dept, ANON_STDDEV(amount, 0, 100) AS sd FROM Orders JOIN Users USING (uid) GROUP BY dept

-- @ median_amount: median (exponential mechanism)
$DP ANON_MEDIAN(amount, 0, 100) AS m FROM Orders

-- @ sum_negative_bounds: bounds below zero
$DP ANON_SUM(amount, -50, 50) AS s FROM Orders

-- @ huge_epsilon_exact: epsilon 1e9 gives nearly exact answers (no caps on unregistered data)
SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1e9, delta = 1e-5, max_groups_contributed = 1) dept, ANON_COUNT(*, 5) AS c FROM Users GROUP BY dept

-- @ per_unit_inner_sum: a per-unit inner aggregate, then a clamped sum
$DP ANON_SUM(s, 0, 300) AS t FROM (SELECT uid, SUM(amount) AS s FROM Orders GROUP BY uid) x

-- @ zetasql_form: the DIFFERENTIAL_PRIVACY form
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 1, delta = 1e-5, max_groups_contributed = 1, privacy_unit_column = uid) item, SUM(amount, contribution_bounds_per_group => (0, 100)) AS s FROM Orders GROUP BY item

-- @ where_filter_literal: a literal filter
$DP ANON_COUNT(*, 5) AS c FROM Orders WHERE amount > 10 AND item LIKE 'p%'

-- @ two_aggregates_cu3: several aggregates, C_u = 3
SELECT WITH ANONYMIZATION OPTIONS (epsilon = 2, delta = 1e-6, max_groups_contributed = 3) day, ANON_COUNT(*, 5) AS c, ANON_SUM(qty, 0, 10) AS q FROM Orders GROUP BY day

-- @ pre_threshold: min_privacy_units_per_group
SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1, delta = 1e-5, max_groups_contributed = 1, min_privacy_units_per_group = 3) dept, ANON_COUNT(*, 5) AS c FROM Users GROUP BY dept
