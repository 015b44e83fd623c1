-- Extreme option values (class 4 and 5): refused with a rule, or a correct release.

-- @ delta_subnormal_cu2: delta = 5e-324 with C_u = 2 (math domain error in the issue)
SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1, delta = 5e-324, max_groups_contributed = 2) dept, ANON_COUNT(*, 5) AS c FROM Users GROUP BY dept

-- @ delta_zero_threshold: delta = 0 with thresholding (tau infinite)
SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1, delta = 0, max_groups_contributed = 1) dept, ANON_COUNT(*, 5) AS c FROM Users GROUP BY dept

-- @ delta_one: delta = 1 releases everything
SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1, delta = 1, max_groups_contributed = 1) dept, ANON_COUNT(*, 5) AS c FROM Users GROUP BY dept

-- @ delta_negative: negative delta
SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1, delta = -1e-5, max_groups_contributed = 1) ANON_COUNT(*, 5) AS c FROM Users

-- @ epsilon_huge: epsilon = 1e300 (accepted without caps; must stay a correct release)
SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1e300, delta = 0.9, max_groups_contributed = 1) dept, ANON_SUM(salary, 0, 200) AS s FROM Users GROUP BY dept

-- @ epsilon_inf: epsilon = inf
SELECT WITH ANONYMIZATION OPTIONS (epsilon = inf, delta = 1e-5, max_groups_contributed = 1) ANON_COUNT(*, 5) AS c FROM Users

-- @ epsilon_nan: epsilon = nan
SELECT WITH ANONYMIZATION OPTIONS (epsilon = nan, delta = 1e-5, max_groups_contributed = 1) ANON_COUNT(*, 5) AS c FROM Users

-- @ epsilon_tiny: epsilon = 1e-300
SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1e-300, delta = 1e-5, max_groups_contributed = 1) ANON_COUNT(*, 5) AS c FROM Users

-- @ k_huge_quantile: max_rows_per_group = 1e21 with a quantile
SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1, delta = 1e-5, max_groups_contributed = 1, max_rows_per_group = 1e21) ANON_MEDIAN(amount, 0, 100) AS m FROM Orders

-- @ k_zero: max_rows_per_group = 0
SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1, delta = 1e-5, max_groups_contributed = 1, max_rows_per_group = 0) ANON_MEDIAN(amount, 0, 100) AS m FROM Orders

-- @ grid_huge: quantile_grid_size = 1e12 (MemoryError in the issue)
SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1, delta = 1e-5, max_groups_contributed = 1, quantile_grid_size = 1000000000000) ANON_MEDIAN(amount, 0, 100) AS m FROM Orders

-- @ cu_huge: max_groups_contributed = 1e18
SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1, delta = 1e-5, max_groups_contributed = 1000000000000000000) day, ANON_COUNT(*, 5) AS c FROM Orders GROUP BY day

-- @ cu_fraction: max_groups_contributed = 1.5
SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1, delta = 1e-5, max_groups_contributed = 1.5) ANON_COUNT(*, 5) AS c FROM Users

-- @ bounds_huge: clamping bounds of 1e300
$DP ANON_SUM(amount, -1e300, 1e300) AS s FROM Orders

-- @ bounds_inverted: L > U
$DP ANON_SUM(amount, 100, 0) AS s FROM Orders

-- @ bounds_string: a string bound
$DP ANON_SUM(amount, 'a', 100) AS s FROM Orders

-- @ count_bound_huge: ANON_COUNT(*, 1e30)
$DP ANON_COUNT(*, 1e30) AS c FROM Orders

-- @ threshold_weight_extreme: threshold_weight = 1e-300
SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1, delta = 1e-5, max_groups_contributed = 1, threshold_weight = 1e-300) dept, ANON_COUNT(*, 5) AS c FROM Users GROUP BY dept

-- @ min_units_huge: min_privacy_units_per_group = 1e30
SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1, delta = 1e-5, max_groups_contributed = 1, min_privacy_units_per_group = 1000000000000000000000000000000) dept, ANON_COUNT(*, 5) AS c FROM Users GROUP BY dept

-- @ duplicate_option: epsilon given twice
SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1, epsilon = 1000, delta = 1e-5, max_groups_contributed = 1) ANON_COUNT(*, 5) AS c FROM Users

-- @ unknown_option: an unknown option
SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1, delta = 1e-5, max_groups_contributed = 1, noise = 0) ANON_COUNT(*, 5) AS c FROM Users

-- @ option_expression: an option given as an expression or subquery
SELECT WITH ANONYMIZATION OPTIONS (epsilon = (SELECT MAX(salary) FROM Users), delta = 1e-5, max_groups_contributed = 1) ANON_COUNT(*, 5) AS c FROM Users

-- @ privacy_unit_other_column: privacy_unit_column names another column
SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1, delta = 1e-5, max_groups_contributed = 1, privacy_unit_column = amount) ANON_COUNT(*, 5) AS c FROM Orders

-- @ quantile_p_out_of_range: a quantile p beyond [0, 1]
$DP ANON_NTILE(amount, 2.5, 0, 100) AS q FROM Orders

-- @ weight_extreme: a per-aggregate weight of 1e300
$DP ANON_SUM(amount, 0, 100, weight => 1e300) AS s, ANON_COUNT(*, 5) AS c FROM Orders
