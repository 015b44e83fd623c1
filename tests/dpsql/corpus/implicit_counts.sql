-- @ count_star_zetasql: COUNT(*) without contribution bounds (ZetaSQL/BigQuery: implicit bounds chosen privately)
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 1, delta = 1e-5, max_groups_contributed = 1) item, COUNT(*) AS n FROM Orders GROUP BY item
-- @ count_column_zetasql: COUNT(x) without bounds counts the victim's non-NULL values under a private bound
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 1, delta = 1e-5, max_groups_contributed = 1) item, COUNT(amount) AS n FROM Orders GROUP BY item
-- @ anon_count_star: the paper form's ANON_COUNT(*) without an upper bound
$DP dept, ANON_COUNT(*) AS n FROM Users JOIN Orders USING (uid) GROUP BY dept
-- @ anon_count_column_weighted: ANON_COUNT(x, weight => 3) without bounds, beside a bounded sum
$DP item, ANON_COUNT(qty, weight => 3) AS n, ANON_SUM(qty, 0, 10) AS s FROM Orders GROUP BY item
-- @ count_star_public_groups: an implicit count over public groups (the victim's unique key is no group)
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 1, max_groups_contributed = 1, group_selection_strategy = PUBLIC_GROUPS) D.dept, COUNT(*) AS n FROM Depts D JOIN Users U ON D.dept = U.dept GROUP BY D.dept
-- @ count_star_three_groups_per_unit: C_u = 3 with an implicit count
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 2, delta = 1e-5, max_groups_contributed = 3) day, COUNT(*) AS n FROM Orders GROUP BY day
