-- The unit followed by identity, not name: expressions, aggregates and struct fields that
-- produce a column called uid without being the unit, and joins on non-unit columns.

-- @ uid_split_expression: uid * 100 + day splits one person into many "units"
$DP ANON_COUNT(*, 1) AS c FROM (SELECT uid * 100 + day AS uid FROM Orders) x

-- @ uid_concat_item: a string built from uid and item as the unit
$DP ANON_SUM(amount, 0, 100) AS s FROM (SELECT CAST(uid AS VARCHAR) || item AS uid, amount FROM Orders) x

-- @ any_value_uid: ANY_VALUE(uid) over an item group merges units into one row
$DP ANON_SUM(n, 0, 100) AS s FROM (SELECT item, ANY_VALUE(uid) AS uid, COUNT(*) AS n FROM Orders GROUP BY item) x

-- @ arg_max_uid: arg_max(uid, amount) names the top spender as the unit of a merged row
$DP ANON_SUM(t, 0, 1000000) AS s FROM (SELECT arg_max(uid, amount) AS uid, SUM(amount) AS t FROM Orders) x

-- @ first_uid: FIRST(uid) over all rows
$DP ANON_COUNT(*, 1) AS c FROM (SELECT FIRST(uid) AS uid, COUNT(*) AS n FROM Orders GROUP BY day) x

-- @ lag_uid: LAG(uid) relabels rows with the previous unit
$DP ANON_COUNT(*, 1) AS c FROM (SELECT LAG(uid) OVER (ORDER BY amount) AS uid FROM Orders) x

-- @ coalesce_uid_public: COALESCE(uid, g) mixes the unit with public values
$DP ANON_COUNT(*, 1) AS c FROM (SELECT COALESCE(U.uid, P.g) AS uid FROM Users U FULL JOIN Pub P ON U.uid = P.g) x

-- @ case_uid_swap: CASE choosing between uid and another column
$DP ANON_COUNT(*, 1) AS c FROM (SELECT CASE WHEN amount > 1000 THEN day ELSE uid END AS uid FROM Orders) x

-- @ struct_field_uid: a struct field named uid holding amount
$DP ANON_COUNT(*, 1) AS c FROM (SELECT {'uid': amount} AS s, uid AS person FROM Orders) x WHERE x.s.uid > 0

-- @ unnest_struct_uid: UNNEST of a struct creates a column uid from amount
$DP ANON_COUNT(*, 1) AS c FROM (SELECT UNNEST({'uid': amount, 'person': uid}) FROM Orders) t

-- @ join_uid_to_day: Users joined to Orders on uid = day (a different person's orders)
$DP ANON_COUNT(*, 1) AS c FROM Users U JOIN Orders O ON U.uid = O.day

-- @ join_uid_in_list: ON U.uid IN (O.uid, O.day)
$DP ANON_COUNT(*, 1) AS c FROM Users U JOIN Orders O ON U.uid IN (O.uid, O.day)

-- @ join_uid_plus_one: a correlated lateral join on the next unit
$DP ANON_SUM(x.amount, 0, 100) AS s FROM Users U, LATERAL (SELECT O.amount FROM Orders O WHERE O.uid = U.uid + 1) x

-- @ join_tuple_equality: (uid, age) = (uid, day) tuple join on the unit (allowed)
$DP ANON_COUNT(*, 1) AS c FROM Users U JOIN Orders O ON (U.uid, U.age) = (O.uid, O.day)

-- @ join_not_distinct: IS NOT DISTINCT FROM on the unit (allowed)
$DP ANON_COUNT(*, 1) AS c FROM Users U JOIN Orders O ON U.uid IS NOT DISTINCT FROM O.uid

-- @ public_uid_via_join_equality: the public side's g projected as uid after g = uid
$DP ANON_COUNT(*, 1) AS c FROM (SELECT P.g AS uid, O.amount FROM Orders O JOIN Pub P ON P.g = O.uid) x

-- @ public_uid_via_inequality: the public side's g projected as uid after g >= uid
$DP ANON_COUNT(*, 1) AS c FROM (SELECT P.g AS uid, O.amount FROM Orders O JOIN Pub P ON P.g >= O.uid) x

-- @ uid_twice_in_select: uid selected twice under two names, one grouped
$DP x.u2 AS k, ANON_COUNT(*, 1) AS c FROM (SELECT uid, uid AS u2 FROM Orders) x GROUP BY x.u2

-- @ exclude_then_public_uid: o.* EXCLUDE (uid) plus a public column named uid
$DP ANON_COUNT(*, 1) AS c FROM (SELECT o.* EXCLUDE (uid), p.g AS uid FROM Orders o CROSS JOIN Pub p) x

-- @ uid_from_users_on_wrong_join: uid taken from Users after a join on dept
$DP ANON_SUM(o_amount, 0, 100) AS s FROM (SELECT U.uid, O.amount AS o_amount FROM Users U JOIN Orders O ON U.age = O.day) x

-- @ uid_merge_mod: uid % 2 merges units (coarser units stay DP; must not leak)
$DP ANON_COUNT(*, 5) AS c FROM (SELECT uid % 2 AS uid FROM Orders) x

-- @ quoted_case_uid_ref: "Uid" of amount referenced as uid outside
$DP ANON_SUM(x.uid, 0, 100) AS s FROM (SELECT amount AS "Uid", uid AS person FROM Orders) x
