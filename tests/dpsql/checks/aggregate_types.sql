-- @ numeric_arguments: ok
$DP ANON_SUM(salary, 0, 100) AS s, ANON_AVG(ABS(salary - 50), 0, 50) AS a, ANON_MEDIAN(age, 0, 100) AS m FROM Users
-- @ counting_text_values: ok
$DP ANON_COUNT(name, 5) AS c FROM Users
-- @ boolean_made_numeric: ok
$DP ANON_SUM(CASE WHEN salary > 50 THEN 1 ELSE 0 END, 0, 1) AS s FROM Users
-- @ explicit_conversion: ok
$DP ANON_SUM(TRY_CAST(code AS DOUBLE), 0, 1) AS s FROM Users
-- @ sum_of_text: DPX-V035
$DP ANON_SUM(dept, 0, 1) AS s FROM Users
-- @ average_of_a_date: DPX-V035
$DP ANON_AVG(joined, 0, 1) AS a FROM Users
-- @ variance_of_a_boolean: DPX-V035
$DP ANON_VAR(salary > 50, 0, 1) AS v FROM Users
-- @ zetasql_quantile_of_text: DPX-V035
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 1, delta = 1e-5, max_groups_contributed = 1) PERCENTILE_CONT(name, 0.5, contribution_bounds_per_row => (0, 1)) AS m FROM Users
-- @ text_through_a_subquery: DPX-V035
$DP ANON_SUM(s.label, 0, 1) AS t FROM (SELECT uid, name AS label FROM Users) s
