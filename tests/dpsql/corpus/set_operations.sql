-- Set operations and recursive CTEs.

-- @ union_all_duplicate: UNION ALL of the table with itself doubles every unit
$DP ANON_COUNT(*, 1) AS c FROM (SELECT uid FROM Users UNION ALL SELECT uid FROM Users) x

-- @ union_relabel: UNION of uid with a public column named uid
$DP ANON_COUNT(*, 1) AS c FROM (SELECT uid FROM Users UNION ALL SELECT g AS uid FROM Pub) x

-- @ union_columns_swapped: positional union swaps uid and salary
$DP ANON_SUM(s, 0, 200) AS t FROM (SELECT uid, salary AS s FROM Users UNION ALL SELECT salary, uid FROM Users) x

-- @ union_distinct: UNION (distinct) dedups across units
$DP ANON_COUNT(*, 1) AS c FROM (SELECT uid, dept FROM Users UNION SELECT uid, item FROM Orders) x

-- @ except_other_units: EXCEPT removes rows of others depending on the victim
$DP ANON_COUNT(*, 1) AS c FROM (SELECT uid, amount FROM Orders EXCEPT SELECT uid, amount FROM Orders WHERE amount > 1000) x

-- @ intersect_private: INTERSECT of private relations
$DP ANON_COUNT(*, 1) AS c FROM (SELECT uid FROM Users INTERSECT SELECT uid FROM Orders) x

-- @ union_by_name: UNION BY NAME relabels by name
$DP ANON_COUNT(*, 1) AS c FROM (SELECT amount AS uid FROM Orders UNION BY NAME SELECT uid FROM Users) x

-- @ recursive_cte: a recursive CTE generating rows per unit
WITH RECURSIVE r(uid, n) AS (SELECT uid, 1 FROM Users UNION ALL SELECT uid, n + 1 FROM r WHERE n < 50) $DP ANON_COUNT(*, 1) AS c FROM r

-- @ recursive_cte_public: a recursive CTE over public data joined to private rows
WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 100) $DP ANON_COUNT(*, 1) AS c FROM Users JOIN r ON r.n <= Users.salary

-- @ union_in_from_top: the DP select itself in a UNION
$DP ANON_COUNT(*, 1) AS c FROM Users UNION ALL SELECT 1
