-- @ within_ranges: ok
SELECT WITH ANONYMIZATION OPTIONS (epsilon = 0.5, delta = 1e-9, max_groups_contributed = 3, max_rows_per_group = 10) dept, ANON_MEDIAN(salary, 0, 100) AS m FROM Users GROUP BY dept
-- @ epsilon_below_floor: DPX-V030
SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1e-9, delta = 1e-5, max_groups_contributed = 1) ANON_COUNT(*, 1) AS c FROM Users
-- @ delta_below_floor: DPX-V031
SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1, delta = 1e-300, max_groups_contributed = 1) ANON_COUNT(*, 1) AS c FROM Users
-- @ too_many_groups: DPX-V032
SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1, delta = 1e-5, max_groups_contributed = 10000000) ANON_COUNT(*, 1) AS c FROM Users
-- @ bound_too_large: DPX-V022
$DP ANON_SUM(salary, 0, 1e16) AS s FROM Users
