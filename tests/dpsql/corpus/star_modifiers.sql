-- DuckDB star modifiers that rename or replace columns (class 1).

-- @ star_replace_uid: * REPLACE (amount AS uid) makes amount the unit
$DP ANON_COUNT(*, 1) AS c FROM (SELECT * REPLACE (amount AS uid) FROM Orders) x

-- @ star_replace_uid_key: * REPLACE moves the real unit into a key column
$DP x.item, ANON_COUNT(*, 1) AS c FROM (SELECT * REPLACE (CAST(uid AS VARCHAR) AS item, day AS uid) FROM Orders) x GROUP BY x.item

-- @ star_rename_uid: * RENAME (uid AS person, amount AS uid)
$DP x.person, ANON_COUNT(*, 1) AS c FROM (SELECT * RENAME (uid AS person, amount AS uid) FROM Orders) x GROUP BY x.person

-- @ star_rename_salary: * RENAME turns salary into the unit column
$DP ANON_SUM(u0, 0, 200) AS s FROM (SELECT * RENAME (uid AS u0, salary AS uid) FROM Users) x

-- @ star_exclude_uid: * EXCLUDE (uid) drops the unit
$DP ANON_COUNT(*, 1) AS c FROM (SELECT * EXCLUDE (uid) FROM Orders) x

-- @ columns_regex: COLUMNS('.*') expansion the resolver cannot trace
$DP ANON_COUNT(*, 1) AS c FROM (SELECT COLUMNS('u.*|amount') FROM Orders) x

-- @ columns_lambda: COLUMNS(lambda) selecting columns by name
$DP ANON_COUNT(*, 1) AS c FROM (SELECT COLUMNS(c -> c LIKE '%id') FROM Orders) x

-- @ star_replace_in_cte: REPLACE inside a CTE
WITH t AS (SELECT * REPLACE (qty AS uid) FROM Orders) $DP ANON_SUM(amount, 0, 100) AS s FROM t

-- @ qualified_star_replace: o.* REPLACE after a join
$DP ANON_COUNT(*, 1) AS c FROM (SELECT o.* REPLACE (p.g AS uid) FROM Orders o CROSS JOIN Pub p) x

-- @ star_like_pattern: SELECT * LIKE pattern (DuckDB 1.1+)
$DP ANON_COUNT(*, 1) AS c FROM (SELECT * LIKE '%u%' FROM Orders) x
