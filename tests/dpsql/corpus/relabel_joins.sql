-- Joins that copy rows or relabel the unit (class 1).

-- @ public_cross_join_copies: a public table of 100 rows multiplies each private row
$DP ANON_SUM(salary, 0, 200) AS s FROM Users CROSS JOIN Pub

-- @ public_cross_join_as_uid: a public column named uid after a cross join
$DP ANON_SUM(s, 0, 200) AS leak FROM (SELECT P.g AS uid, U.salary AS s FROM Users U CROSS JOIN Pub P WHERE U.uid = 7) x

-- @ self_join_on_relabelled: a private self-join on amount relabelled as uid
$DP ANON_COUNT(*, 1) AS c FROM (SELECT amount AS uid FROM Orders) a JOIN (SELECT amount AS uid FROM Orders) b ON a.uid = b.uid

-- @ private_join_not_on_unit: Users joined to Orders on day = age (not the unit)
$DP ANON_COUNT(*, 1) AS c FROM Users U JOIN Orders O ON U.age = O.day

-- @ private_join_inequality: a join on U.uid <= O.uid multiplies rows across units
$DP ANON_COUNT(*, 1) AS c FROM Users U JOIN Orders O ON U.uid <= O.uid

-- @ private_join_or_condition: ON U.uid = O.uid OR TRUE
$DP ANON_COUNT(*, 1) AS c FROM Users U JOIN Orders O ON U.uid = O.uid OR O.amount > 0

-- @ join_using_relabelled: USING (uid) where one side's uid is a renamed column
$DP ANON_COUNT(*, 1) AS c FROM Users JOIN (SELECT day AS uid, amount FROM Orders) o USING (uid)

-- @ natural_join_private: NATURAL JOIN of the two private tables
$DP ANON_COUNT(*, 1) AS c FROM Users NATURAL JOIN Orders

-- @ lateral_join_private: LATERAL subquery reading other units' rows
$DP ANON_SUM(x.s, 0, 100) AS s FROM Users U, LATERAL (SELECT SUM(amount) AS s FROM Orders O WHERE O.uid <> U.uid) x

-- @ semi_join_other_unit: a semi join keeps rows depending on another unit's data
$DP ANON_COUNT(*, 1) AS c FROM Users U SEMI JOIN Orders O ON O.item = 'unicorn'

-- @ anti_join_other_unit: an anti join removes every row when the victim exists
$DP ANON_COUNT(*, 1) AS c FROM Users U ANTI JOIN Orders O ON O.amount > 1000

-- @ public_side_uid_first: the public side of a join projected as the unit
$DP ANON_COUNT(*, 1000) AS c FROM (SELECT p.g AS uid FROM Pub p JOIN Users u ON TRUE) x

-- @ full_join_private_public: a FULL JOIN creating rows with NULL unit
$DP ANON_COUNT(*, 1) AS c FROM Users U FULL JOIN Depts D ON U.dept = D.dept
