-- Scalar subqueries and constant expressions (issue 9, engineer 9b). A public scalar subquery
-- with several rows raises, and so does a constant like 1 // 0; whether the engine evaluates
-- either can depend on private rows (a CASE branch, a filter, an empty join side), so the
-- failure was a released bit. A scalar subquery must return at most one row by its shape
-- (DPX-A006), and constant expressions run inside TRY like every other fallible one.

-- @ many_rows_in_victim_branch: a multi-row public subquery evaluated only for the victim
$DP dept, ANON_COUNT(*, 5) AS c FROM Users WHERE CASE WHEN uid = 7 THEN uid = (SELECT g FROM Pub) ELSE false END GROUP BY dept

-- @ many_rows_in_aggregate_argument: a multi-row public subquery as a CASE result (A003)
$DP dept, ANON_SUM(CASE WHEN uid = 7 THEN (SELECT g FROM Pub) ELSE 0 END, 0, 100) AS s FROM Users GROUP BY dept

-- @ many_rows_in_join_condition: a multi-row subquery in a join with a public table
$DP U.dept, ANON_COUNT(*, 5) AS c FROM Users U JOIN Depts D ON U.dept = D.dept AND D.floor = (SELECT floor FROM Depts) GROUP BY U.dept

-- @ many_rows_inside_public_subquery: a multi-row scalar inside a public derived table, used
$DP U.dept, ANON_COUNT(*, 5) AS c FROM Users U JOIN (SELECT g, (SELECT g FROM Pub) AS z FROM Pub) p ON U.age = p.g + p.z GROUP BY U.dept

-- @ many_rows_in_public_cte: a multi-row scalar inside a public CTE joined to the victim's rows
WITH p AS (SELECT g FROM Pub WHERE g = (SELECT g FROM Pub)) $DP U.dept, ANON_COUNT(*, 5) AS c FROM Users U JOIN p ON U.age = p.g GROUP BY U.dept

-- @ many_rows_in_limit: a multi-row subquery as the LIMIT
$DP dept, ANON_COUNT(*, 5) AS c FROM Users GROUP BY dept LIMIT (SELECT g FROM Pub)

-- @ grouped_aggregate: an aggregate with GROUP BY returns one row per group
$DP dept, ANON_COUNT(*, 5) AS c FROM Users WHERE CASE WHEN uid = 7 THEN age = (SELECT MAX(g) FROM Pub GROUP BY label) ELSE false END GROUP BY dept

-- @ limit_two: LIMIT 2 may return two rows
$DP dept, ANON_COUNT(*, 5) AS c FROM Users WHERE CASE WHEN uid = 7 THEN age = (SELECT g FROM Pub LIMIT 2) ELSE false END GROUP BY dept

-- @ limit_with_ties: FETCH FIRST 1 ROW WITH TIES may return every tied row
$DP dept, ANON_COUNT(*, 5) AS c FROM Users WHERE CASE WHEN uid = 7 THEN age = (SELECT g FROM Pub ORDER BY label FETCH FIRST 1 ROWS WITH TIES) ELSE false END GROUP BY dept

-- @ limit_percent: LIMIT 5% is a share of the rows, not a count
$DP dept, ANON_COUNT(*, 5) AS c FROM Users WHERE CASE WHEN uid = 7 THEN age = (SELECT g FROM Pub LIMIT 5%) ELSE false END GROUP BY dept

-- @ limit_computed: a computed LIMIT is not a literal
$DP dept, ANON_COUNT(*, 5) AS c FROM Users WHERE CASE WHEN uid = 7 THEN age = (SELECT g FROM Pub LIMIT 1 + 1) ELSE false END GROUP BY dept

-- @ nested_parens_many_rows: extra parentheses around a multi-row subquery
$DP dept, ANON_COUNT(*, 5) AS c FROM Users WHERE CASE WHEN uid = 7 THEN age = ((SELECT g FROM Pub)) ELSE false END GROUP BY dept

-- @ in_list_of_subquery: a multi-row subquery as one element of an IN list
$DP dept, ANON_COUNT(*, 5) AS c FROM Users WHERE CASE WHEN uid = 7 THEN age IN (1, (SELECT g FROM Pub)) ELSE false END GROUP BY dept

-- @ limit_one_accepted: LIMIT 1 returns at most one row (released)
$DP dept, ANON_COUNT(*, 5) AS c FROM Users WHERE CASE WHEN uid = 7 THEN age = (SELECT g FROM Pub ORDER BY g LIMIT 1) ELSE false END GROUP BY dept

-- @ aggregate_accepted: an aggregate without GROUP BY returns one row (released)
$DP dept, ANON_COUNT(*, 5) AS c FROM Users WHERE CASE WHEN uid = 7 THEN age = (SELECT MAX(g) FROM Pub) ELSE false END GROUP BY dept

-- @ aggregate_having_accepted: an aggregate with HAVING returns zero or one row (released)
$DP dept, ANON_COUNT(*, 5) AS c FROM Users WHERE CASE WHEN uid = 7 THEN age = (SELECT COUNT(*) FROM Pub HAVING COUNT(*) > 1000) ELSE true END GROUP BY dept

-- @ in_subquery_accepted: IN (SELECT ...) takes any number of rows (released)
$DP dept, ANON_COUNT(*, 5) AS c FROM Users WHERE CASE WHEN uid = 7 THEN age IN (SELECT g FROM Pub) ELSE false END GROUP BY dept

-- @ exists_accepted: EXISTS over a public table takes any number of rows (released)
$DP dept, ANON_COUNT(*, 5) AS c FROM Users WHERE dept = 'Zeta' AND EXISTS (SELECT g FROM Pub WHERE g > 50) GROUP BY dept

-- @ exists_in_victim_branch: EXISTS over a public table in the victim's branch (released)
$DP dept, ANON_COUNT(*, 5) AS c FROM Users WHERE CASE WHEN uid = 7 THEN EXISTS (SELECT g FROM Pub) ELSE false END GROUP BY dept

-- @ int_div_zero_constant: 1 // 0 evaluated only in the victim's CASE branch (raised for D only)
$DP dept, ANON_COUNT(*, 5) AS c FROM Users WHERE CASE WHEN uid = 7 THEN 1 // 0 = 1 ELSE false END GROUP BY dept

-- @ mod_zero_constant: 1 % 0 evaluated only for the victim's rows
$DP dept, ANON_COUNT(*, 5) AS c FROM Users WHERE CASE WHEN dept = 'Zeta' THEN 1 % 0 = 1 ELSE false END GROUP BY dept

-- @ date_overflow_constant: a constant date beyond DuckDB's range, only for the victim's rows
$DP dept, ANON_COUNT(*, 5) AS c FROM Users WHERE CASE WHEN salary > 120 THEN DATE '2020-01-01' + INTERVAL 100000000 YEAR IS NULL ELSE false END GROUP BY dept

-- @ constant_in_aggregate_argument: 1 // 0 as the victim's aggregate argument
$DP dept, ANON_SUM(CASE WHEN uid = 7 THEN 1 // 0 ELSE 1 END, 0, 5) AS s FROM Users GROUP BY dept

-- @ constant_in_public_subquery: 1 // 0 in a one-row public subquery behind the victim's branch
$DP dept, ANON_COUNT(*, 5) AS c FROM Users WHERE CASE WHEN uid = 7 THEN age = (SELECT 1 // 0 FROM Pub LIMIT 1) ELSE false END GROUP BY dept

-- @ column_div_zero_in_public_subquery: g // 0 in a public subquery behind the victim's branch
$DP dept, ANON_COUNT(*, 5) AS c FROM Users WHERE CASE WHEN uid = 7 THEN age = (SELECT g // 0 FROM Pub LIMIT 1) ELSE false END GROUP BY dept

-- @ raising_column_of_public_join: a public derived table with a raising constant, joined to the victim's rows
$DP U.dept, ANON_COUNT(*, 5) AS c FROM (SELECT uid, dept, age FROM Users WHERE salary > 120) U JOIN (SELECT g, 1 // 0 AS z FROM Pub) p ON U.age = p.g + p.z GROUP BY U.dept

-- @ unused_many_rows_column: a multi-row scalar in a column DuckDB prunes (ran or not by plan)
$DP U.dept, ANON_COUNT(*, 5) AS c FROM Users U JOIN (SELECT g, (SELECT g FROM Pub) AS z FROM Pub) p ON U.age = p.g GROUP BY U.dept

-- @ public_cte_aggregate_accepted: an aggregate over a public CTE (was V016 "over a private table")
WITH p AS (SELECT g FROM Pub WHERE g > 10) $DP dept, ANON_COUNT(*, 5) AS c FROM Users WHERE age > (SELECT MIN(g) FROM p) GROUP BY dept

-- @ private_cte_chain_in_subquery: IN over a CTE that reads a private table through another CTE
WITH q AS (SELECT uid AS g FROM Users), p AS (SELECT g FROM q) $DP dept, ANON_COUNT(*, 5) AS c FROM Users WHERE age IN (SELECT g FROM p) GROUP BY dept
