-- Subqueries in expressions: private data deciding which rows of other units count.

-- @ exists_victim: EXISTS on the victim's rows gates every row
$DP ANON_COUNT(*, 1) AS c FROM Users WHERE EXISTS (SELECT 1 FROM Orders WHERE item = 'unicorn')

-- @ in_subquery_private: IN over a private subquery
$DP ANON_COUNT(*, 1) AS c FROM Users WHERE dept IN (SELECT dept FROM Users WHERE salary > 120)

-- @ scalar_private_max: a private scalar MAX in the WHERE clause
$DP ANON_COUNT(*, 1) AS c FROM Users WHERE salary = (SELECT MAX(salary) FROM Users)

-- @ scalar_private_in_select: a private scalar subquery in an aggregate argument
$DP ANON_SUM((SELECT MAX(salary) FROM Users), 0, 200) AS s FROM Users

-- @ correlated_other_units: a correlated subquery counting other units' orders
$DP ANON_SUM((SELECT COUNT(*) FROM Orders O WHERE O.uid <> U.uid), 0, 1000) AS s FROM Users U

-- @ public_scalar_ok: a public scalar subquery in WHERE (allowed, public only)
$DP ANON_COUNT(*, 1) AS c FROM Users WHERE age > (SELECT MIN(floor) FROM Depts)

-- @ any_all_private: ANY/ALL over private data
$DP ANON_COUNT(*, 1) AS c FROM Users WHERE salary >= ALL (SELECT salary FROM Users WHERE salary IS NOT NULL)

-- @ cte_total_broadcast: a CTE with the total of all units joined to every row
WITH t AS (SELECT SUM(amount) AS total FROM Orders) $DP ANON_SUM(t.total, 0, 1000000) AS s FROM Orders, t

-- @ cte_shadow_public: a CTE shadowing a public table name with private data
WITH Pub AS (SELECT uid AS g, salary AS label FROM Users) $DP ANON_SUM(Pub.label, 0, 200) AS s FROM Orders JOIN Pub ON Orders.uid = Pub.g

-- @ cte_shadow_private: a CTE named like the private table with cross-unit rows
WITH Users AS (SELECT MIN(uid) AS uid, SUM(salary) AS salary FROM Users) $DP ANON_SUM(salary, 0, 100000) AS s FROM Users

-- @ inner_count_star_merge: a per-item count merged into each row
$DP ANON_SUM(n, 0, 100) AS s FROM (SELECT o.uid, c.n FROM Orders o JOIN (SELECT item, COUNT(*) AS n FROM Orders GROUP BY item) c USING (item)) x

-- @ public_private_join_key: a public table joined on a private key (allowed)
$DP D.floor, ANON_COUNT(*, 5) AS c FROM Users U JOIN Depts D ON U.dept = D.dept GROUP BY D.floor

-- @ case_when_private_subquery: CASE over a private scalar subquery
$DP ANON_SUM(CASE WHEN (SELECT COUNT(*) FROM Orders) > 150 THEN 100 ELSE 0 END, 0, 100) AS s FROM Users
