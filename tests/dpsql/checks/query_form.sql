-- @ paper_form: ok
$DP dept, ANON_COUNT(*, 5) AS c, ANON_AVG(salary, 0, 100) AS a FROM Users GROUP BY dept
-- @ zetasql_form: ok
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 1, delta = 1e-5, max_groups_contributed = 1) dept, SUM(salary, contribution_bounds_per_group => (0, 100)) AS s FROM Users GROUP BY dept
-- @ plain_aggregate: DPX-V020
$DP MAX(salary) AS m FROM Users
-- @ no_bounds: DPX-V021
$DP ANON_SUM(salary) AS s FROM Users
-- @ count_distinct_not_the_unit: DPX-V024
$DP COUNT(DISTINCT dept) AS n FROM Users
-- @ output_neither_key_nor_aggregate: DPX-V027
$DP age, ANON_COUNT(*, 1) AS c FROM Users
-- @ forms_mixed: DPX-V029
$DP SUM(salary, contribution_bounds_per_group => (0, 1)) AS s FROM Users
-- @ no_epsilon: DPX-V030
SELECT WITH ANONYMIZATION OPTIONS (delta = 1e-5, max_groups_contributed = 1) ANON_COUNT(*, 1) AS c FROM Users
