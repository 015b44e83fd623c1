-- @ issue_query: issue 19's query: one Users row fans out to 400^4 rows of a public 400-row table, so whether user 7 exists decides a timeout
SELECT WITH ANONYMIZATION OPTIONS(epsilon=1, delta=1e-5, max_groups_contributed=1) ANON_COUNT(*, 5) AS c FROM Users U JOIN Seq A ON U.uid = 7 JOIN Seq B ON TRUE JOIN Seq C ON TRUE JOIN Seq E ON TRUE
-- @ issue_query_binary_search: the same with a salary predicate, one step of a binary search on user 7's salary
SELECT WITH ANONYMIZATION OPTIONS(epsilon=1, delta=1e-5, max_groups_contributed=1) ANON_COUNT(*, 5) AS c FROM Users U JOIN Seq A ON U.uid = 7 AND U.salary >= 120 JOIN Seq B ON TRUE JOIN Seq C ON TRUE
-- @ where_predicate_decides: the victim predicate in WHERE instead of ON
$DP ANON_COUNT(*, 5) AS c FROM Users U JOIN Seq A ON TRUE JOIN Seq B ON TRUE WHERE U.uid = 7
-- @ cross_join_syntax: CROSS JOIN and comma joins fan out to every row
$DP ANON_COUNT(*, 5) AS c FROM Users U CROSS JOIN Seq A, Seq B
-- @ non_equi_join: a range condition meets every row of the public side
$DP ANON_COUNT(*, 5) AS c FROM Users U JOIN Seq A ON A.i < U.age JOIN Seq B ON B.i > U.age
-- @ or_condition: an OR of equalities meets every row
$DP ANON_COUNT(*, 5) AS c FROM Users U JOIN Seq A ON U.age = A.i OR U.uid = 7 JOIN Seq B ON U.age = B.i OR U.uid = 7
-- @ computed_key: an equality on a computed public column is not a key
$DP ANON_COUNT(*, 5) AS c FROM Users U JOIN Seq A ON U.age = A.i % 2 JOIN Seq B ON U.age = B.i % 2
-- @ duplicated_keys: a public key with many duplicates, four times over
$DP ANON_COUNT(*, 5) AS c FROM Users U JOIN Pub A ON U.code = A.label JOIN Pub B ON U.code = B.label JOIN Pub C ON U.code = C.label JOIN Pub E ON U.code = E.label
-- @ chain_of_public_joins: public tables joined to each other ON TRUE, then to the private one by a key of one of them
$DP ANON_COUNT(*, 5) AS c FROM Seq A JOIN Seq B ON TRUE JOIN Seq C ON TRUE JOIN Users U ON U.uid = A.i
-- @ cte_product: the product hidden in a CTE
WITH big AS (SELECT A.i FROM Seq A, Seq B) $DP ANON_COUNT(*, 5) AS c FROM Users U JOIN big ON U.uid = 7
-- @ subquery_product: the product hidden in a derived table
$DP ANON_COUNT(*, 5) AS c FROM Users U JOIN (SELECT A.i FROM Seq A JOIN Seq B ON TRUE) s ON s.i > U.age
-- @ grouped_blow_up: a grouped private subquery whose join blows up before the GROUP BY
$DP ANON_COUNT(*, 5) AS c FROM (SELECT U.uid FROM Users U JOIN Seq A ON TRUE JOIN Seq B ON TRUE GROUP BY U.uid) s
-- @ correlated_exists: a correlated subquery runs once per private row
$DP ANON_COUNT(*, 5) AS c FROM Users U WHERE EXISTS (SELECT 1 FROM Seq A, Seq B WHERE A.i = U.age AND U.uid = 7)
-- @ correlated_scalar: a correlated scalar subquery compared in WHERE, evaluated per private row
$DP ANON_COUNT(*, 5) AS c FROM Users U WHERE (SELECT COUNT(*) FROM Seq A, Seq B WHERE A.i < U.age) > 3
-- @ private_self_joins: the victim's 40 orders self-joined: 40^4 rows without a per-unit cap
$DP ANON_COUNT(*, 5) AS c FROM Orders O1 JOIN Orders O2 USING (uid) JOIN Orders O3 USING (uid) JOIN Orders O4 USING (uid) WHERE O1.uid = 7
-- @ private_join_plus_public_fan_out: a private join whose rows then meet a public table
$DP ANON_COUNT(*, 5) AS c FROM Users U JOIN Orders O USING (uid) JOIN Seq A ON TRUE
-- @ public_key_join_runs: a key equality with a public table (fan-out 1) is accepted and releases
$DP D.floor, ANON_COUNT(*, 5) AS c FROM Users U JOIN Depts D ON U.dept = D.dept GROUP BY D.floor
-- @ small_cross_join_runs: one cross join with a 400-row table is within the limit
$DP ANON_COUNT(*, 5) AS c FROM Users U JOIN Seq A ON A.i < 3
-- @ capped_private_join_runs: a private join keeps at most 100 rows per unit and releases
$DP ANON_COUNT(*, 5) AS c, ANON_SUM(O2.amount, 0, 100) AS s FROM Orders O1 JOIN Orders O2 USING (uid)
