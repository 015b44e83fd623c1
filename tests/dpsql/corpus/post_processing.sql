-- Post-processing (select-list arithmetic, HAVING, ORDER BY, LIMIT) and aggregate arguments
-- must only ever see released values and public constants.

-- @ limit_private_subquery: LIMIT from a private scalar subquery
$DP dept, ANON_COUNT(*, 5) AS c FROM Users GROUP BY dept LIMIT (SELECT COUNT(*) FROM Orders WHERE item = 'unicorn')

-- @ having_private_subquery: HAVING against a private scalar
$DP dept, ANON_COUNT(*, 5) AS c FROM Users GROUP BY dept HAVING c > (SELECT MAX(salary) FROM Users) - 1000

-- @ select_arith_private_subquery: select-list arithmetic with a private scalar
$DP dept, ANON_COUNT(*, 5) + (SELECT MAX(salary) FROM Users) AS c FROM Users GROUP BY dept

-- @ having_raw_aggregate: HAVING with a raw (non-DP) aggregate
$DP dept, ANON_COUNT(*, 5) AS c FROM Users GROUP BY dept HAVING MAX(salary) > 120

-- @ order_by_raw_column: ORDER BY a private non-key column
$DP dept, ANON_COUNT(*, 5) AS c FROM Users GROUP BY dept ORDER BY salary

-- @ order_by_raw_aggregate: ORDER BY a raw aggregate
$DP dept, ANON_COUNT(*, 5) AS c FROM Users GROUP BY dept ORDER BY MAX(salary) DESC

-- @ bounds_from_private_subquery: clamping bounds computed from private data
$DP ANON_SUM(amount, 0, (SELECT MAX(salary) FROM Users)) AS s FROM Orders

-- @ count_bound_from_subquery: the COUNT contribution bound from a subquery
$DP ANON_COUNT(*, (SELECT COUNT(*) FROM Orders)) AS c FROM Users

-- @ quantile_p_from_subquery: the quantile level from a private subquery
$DP ANON_NTILE(amount, (SELECT MIN(salary) FROM Users) / 1000, 0, 100) AS q FROM Orders

-- @ bounds_from_column: clamping bounds naming a column
$DP ANON_SUM(amount, 0, qty) AS s FROM Orders

-- @ limit_offset_post: LIMIT/OFFSET on released rows (post-processing, allowed)
$DP item, ANON_COUNT(*, 5) AS c FROM Orders GROUP BY item ORDER BY item LIMIT 2 OFFSET 1

-- @ division_of_released: dividing released values (post-processing, may divide by zero)
$DP dept, ANON_COUNT(*, 5) / (ANON_COUNT(*, 5) - ANON_COUNT(*, 5)) AS r FROM Users GROUP BY dept

-- @ cast_released_to_int: casting a released noisy value to a small type
$DP dept, CAST(ANON_SUM(salary, 0, 100) * 1e10 AS TINYINT) AS r FROM Users GROUP BY dept

-- @ window_over_released: a window function over released rows
$DP dept, ANON_COUNT(*, 5) AS c, SUM(ANON_COUNT(*, 5)) OVER () AS t FROM Users GROUP BY dept
