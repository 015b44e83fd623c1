-- Column-alias lists relabel another column as the unit (issue 9, class 1).

-- @ table_alias_list_swap: Orders AS O(person, uid) makes the real unit a key and amount the "unit"
$DP O.person, ANON_COUNT(*, 1) AS c FROM Orders AS O(person, uid) GROUP BY O.person

-- @ table_alias_list_qty_as_uid: qty relabelled as uid bounds contributions per quantity
$DP ANON_SUM(a, 0, 100) AS s FROM Orders AS O(u0, a, uid)

-- @ table_alias_list_partial: a partial alias list renames only the first column
$DP ANON_COUNT(*, 1) AS c FROM Orders AS O(person) WHERE person = 7

-- @ subquery_alias_list_swap: a subquery's alias list swaps uid and amount
$DP x.person, ANON_COUNT(*, 1) AS c FROM (SELECT uid, amount FROM Orders) AS x(person, uid) GROUP BY x.person

-- @ subquery_alias_list_salary_key: the victim's salary becomes a released key via an alias list
$DP x.s, ANON_COUNT(*, 5) AS c FROM (SELECT uid, salary, age FROM Users) AS x(age, s, uid) GROUP BY x.s

-- @ cte_alias_list_swap: a CTE column list relabels amount as uid
WITH t(person, uid) AS (SELECT uid, amount FROM Orders) $DP t.person, ANON_COUNT(*, 1) AS c FROM t GROUP BY t.person

-- @ cte_alias_list_salary: CTE column list turns salary into the unit, uid into a key
WITH t(k, uid) AS (SELECT uid, salary FROM Users) $DP k, ANON_SUM(uid, 0, 200) AS s FROM t GROUP BY k

-- @ nested_alias_lists: two levels of alias lists cancel out to look innocent
$DP ANON_SUM(z.a, 0, 100) AS s FROM (SELECT * FROM Orders AS o1(a, uid)) AS z(a, uid)

-- @ alias_list_join_condition: a relabelled column used as the unit in a private-private join
$DP ANON_COUNT(*, 1) AS c FROM Users AS U JOIN Orders AS O(person, uid) ON U.uid = O.uid

-- @ alias_list_values_clause: a VALUES list with an alias list joined to private data
$DP v.uid, ANON_COUNT(*, 1) AS c FROM Orders o JOIN (VALUES (7), (8)) AS v(uid) ON o.uid = v.uid GROUP BY v.uid

-- @ alias_list_quoted_uid: a quoted "UID" in an alias list
$DP x."UID" AS k, ANON_COUNT(*, 1) AS c FROM Orders AS x(person, "UID") GROUP BY x."UID"

-- @ alias_list_cross_public_copy: alias list plus a public cross join copying each row 100 times
$DP ANON_SUM(s, 0, 200) AS leak FROM (SELECT U.salary AS s, P.g AS uid FROM Users AS U(person, d, s0), Pub AS P WHERE person = 7 AND U.s0 IS NOT NULL) x
