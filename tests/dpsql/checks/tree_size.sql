-- @ small_tree: ok
$DP dept, ANON_AVG(salary, 0, 100) AS a FROM Users WHERE age > 30 GROUP BY dept
-- @ bind_parameter: DPX-S006
$DP ANON_COUNT(*, 1) AS c FROM Users WHERE age > ?
-- @ doubling_cte_chain: DPX-S005
WITH p0 AS (SELECT uid FROM Users),
p1 AS (SELECT a.uid FROM p0 a JOIN p0 b ON a.uid = b.uid),
p2 AS (SELECT a.uid FROM p1 a JOIN p1 b ON a.uid = b.uid),
p3 AS (SELECT a.uid FROM p2 a JOIN p2 b ON a.uid = b.uid),
p4 AS (SELECT a.uid FROM p3 a JOIN p3 b ON a.uid = b.uid),
p5 AS (SELECT a.uid FROM p4 a JOIN p4 b ON a.uid = b.uid),
p6 AS (SELECT a.uid FROM p5 a JOIN p5 b ON a.uid = b.uid),
p7 AS (SELECT a.uid FROM p6 a JOIN p6 b ON a.uid = b.uid),
p8 AS (SELECT a.uid FROM p7 a JOIN p7 b ON a.uid = b.uid),
p9 AS (SELECT a.uid FROM p8 a JOIN p8 b ON a.uid = b.uid),
p10 AS (SELECT a.uid FROM p9 a JOIN p9 b ON a.uid = b.uid),
p11 AS (SELECT a.uid FROM p10 a JOIN p10 b ON a.uid = b.uid)
$DP ANON_COUNT(*, 1) AS c FROM p11
