-- @ join_on_the_unit: ok
$DP dept, ANON_SUM(amount, 0, 100) AS s FROM Users JOIN Orders USING (uid) GROUP BY dept
-- @ public_join_is_free: ok
$DP D.floor, ANON_COUNT(*, 1) AS c FROM Users U JOIN Depts D ON U.dept = D.dept GROUP BY D.floor
-- @ unknown_table: DPX-S003
$DP ANON_COUNT(*, 1) AS c FROM Nope
-- @ file_path: DPX-S003
$DP ANON_COUNT(*, 1) AS c FROM 'users.csv'
-- @ comma_join_of_private_tables: DPX-V011
$DP ANON_COUNT(*, 1) AS c FROM Users, Orders
-- @ private_join_not_on_the_unit: DPX-V010
$DP ANON_COUNT(*, 1) AS c FROM Users U JOIN Orders O ON U.age = O.qty
-- @ private_aggregate_without_the_unit: DPX-V012
$DP ANON_SUM(s.n, 0, 5) AS c FROM (SELECT dept, COUNT(*) AS n FROM Users GROUP BY dept) s
-- @ subquery_drops_the_unit: DPX-V013
$DP ANON_COUNT(*, 1) AS c FROM (SELECT dept FROM Users) s
