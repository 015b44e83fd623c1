-- @ one_dp_select: ok
$DP dept, ANON_COUNT(*, 5) AS c FROM Users GROUP BY dept
-- @ two_statements: DPX-S001
$DP ANON_COUNT(*, 1) AS c FROM Users; SELECT 1
-- @ plain_select: DPX-S001
SELECT dept FROM Users
-- @ ddl: DPX-S002
DROP TABLE Users
-- @ union: DPX-S001
SELECT uid FROM Users UNION SELECT uid FROM Orders
-- @ column_alias_list: DPX-L001
$DP ANON_COUNT(*, 1) AS c FROM (SELECT uid FROM Users) AS u(person)
-- @ window_in_subquery: DPX-L007
$DP ANON_COUNT(*, 1) AS c FROM (SELECT uid, ROW_NUMBER() OVER () AS r FROM Users) u
