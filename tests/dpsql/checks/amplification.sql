-- @ public_key_join: ok
$DP D.floor, ANON_COUNT(*, 1) AS c FROM Users U JOIN Depts D ON U.dept = D.dept GROUP BY D.floor
-- @ one_cross_join_with_a_small_table: ok
$DP ANON_COUNT(*, 5) AS c FROM Users U JOIN Pub A ON TRUE
-- @ two_private_joins_at_the_limit: ok
$DP ANON_COUNT(*, 5) AS c FROM Users U JOIN Orders O1 USING (uid) JOIN Orders O2 USING (uid)
-- @ per_unit_subqueries_joined: ok
$DP ANON_SUM(a.n + b.n, 0, 50) AS s FROM Users U JOIN (SELECT uid, COUNT(*) AS n FROM Orders GROUP BY uid) a USING (uid) JOIN (SELECT uid, COUNT(*) AS n FROM Orders GROUP BY uid) b USING (uid) JOIN (SELECT uid, COUNT(*) AS n FROM Orders GROUP BY uid) c USING (uid)
-- @ issue_query_on_true_chain: DPX-V040
SELECT WITH ANONYMIZATION OPTIONS(epsilon=1, delta=1e-5, max_groups_contributed=1) ANON_COUNT(*, 5) AS c FROM Users U JOIN Seq A ON U.uid = 7 JOIN Seq B ON TRUE JOIN Seq C ON TRUE JOIN Seq E ON TRUE
-- @ duplicated_public_keys: DPX-V040
$DP ANON_COUNT(*, 5) AS c FROM Users U JOIN Pub A ON U.code = A.label JOIN Pub B ON U.code = B.label JOIN Pub C ON U.code = C.label JOIN Pub E ON U.code = E.label
-- @ non_equi_and_or_conditions: DPX-V040
$DP ANON_COUNT(*, 5) AS c FROM Users U JOIN Pub A ON U.age < A.g JOIN Pub B ON U.age = B.g OR U.salary = B.g JOIN Pub C ON A.g <> C.g
-- @ product_hidden_in_a_cte: DPX-V040
WITH big AS (SELECT A.g FROM Pub A, Pub B, Pub C) $DP ANON_COUNT(*, 5) AS c FROM Users U JOIN big ON U.age < big.g
-- @ blow_up_inside_a_grouped_subquery: DPX-V040
$DP ANON_COUNT(*, 5) AS c FROM (SELECT U.uid FROM Users U JOIN Pub A ON TRUE JOIN Pub B ON TRUE JOIN Pub C ON TRUE GROUP BY U.uid) s
-- @ correlated_subquery_over_a_product: DPX-V040
$DP ANON_COUNT(*, 5) AS c FROM Users U WHERE EXISTS (SELECT 1 FROM Pub A, Pub B, Pub C WHERE A.g = U.age)
-- @ private_self_joins: DPX-V040
$DP ANON_COUNT(*, 5) AS c FROM Orders O1 JOIN Orders O2 USING (uid) JOIN Orders O3 USING (uid) JOIN Orders O4 USING (uid)
