-- GROUP BY keys: NULLs, dates, expressions, a value only the victim has.

-- @ unique_dept_key: dept 'Zeta' exists only for the victim (threshold must hide it)
$DP dept, ANON_COUNT(*, 5) AS c FROM Users GROUP BY dept

-- @ unique_item_key: item 'unicorn' only for the victim, 40 rows
$DP item, ANON_SUM(amount, 0, 100) AS s FROM Orders GROUP BY item

-- @ null_key: NULL dept (nulls victim) as a key
$DP dept, ANON_AVG(salary, 0, 200) AS a FROM Users GROUP BY dept

-- @ date_key: DATE keys
$DP joined, ANON_COUNT(*, 5) AS c FROM Users GROUP BY joined

-- @ timestamp_key: TIMESTAMP keys of the victim's orders
$DP ts, ANON_COUNT(*, 5) AS c FROM Orders GROUP BY ts

-- @ date_trunc_key: truncated dates as keys
$DP date_trunc('year', joined) AS y, ANON_COUNT(*, 5) AS c FROM Users GROUP BY date_trunc('year', joined)

-- @ salary_key: the victim's salary as a key
$DP salary, ANON_COUNT(*, 5) AS c FROM Users GROUP BY salary

-- @ uid_expression_key: an expression of the unit as a key
$DP uid + 0 AS k, ANON_COUNT(*, 5) AS c FROM Users GROUP BY uid + 0

-- @ uid_cast_key: CAST(uid AS VARCHAR) as a key
$DP CAST(uid AS VARCHAR) AS k, ANON_COUNT(*, 5) AS c FROM Users GROUP BY CAST(uid AS VARCHAR)

-- @ two_keys_cu2: two keys, C_u = 2
SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1, delta = 1e-5, max_groups_contributed = 2) dept, item, ANON_COUNT(*, 5) AS c FROM Users JOIN Orders USING (uid) GROUP BY dept, item

-- @ many_partitions_cu1: a unit in many partitions with C_u = 1 (contribution bounding)
$DP day, ANON_SUM(amount, 0, 100) AS s FROM Orders GROUP BY day

-- @ public_groups_keys: public groups: the key set comes from the public table only
SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1, max_groups_contributed = 1, group_selection_strategy = PUBLIC_GROUPS) D.dept, ANON_COUNT(*, 5) AS c FROM Depts D LEFT JOIN Users U ON U.dept = D.dept GROUP BY D.dept

-- @ name_length_key: length of the victim's 5000-char name as a key
$DP length(name) AS n, ANON_COUNT(*, 5) AS c FROM Users GROUP BY length(name)

-- @ key_from_scalar_subquery: a key computed from a private scalar subquery
$DP (SELECT MAX(salary) FROM Users) AS m, ANON_COUNT(*, 5) AS c FROM Users GROUP BY 1

-- @ boolean_key_on_victim: a boolean key true only for the victim
$DP salary > 120 AS rich, ANON_COUNT(*, 5) AS c FROM Users GROUP BY salary > 120

-- @ public_groups_private_key: PUBLIC_GROUPS with a key taken from the private side
SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1, max_groups_contributed = 1, group_selection_strategy = PUBLIC_GROUPS) U.dept, ANON_COUNT(*, 5) AS c FROM Users U GROUP BY U.dept
