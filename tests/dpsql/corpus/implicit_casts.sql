-- Implicit casts that fail on one unit's value: a data-dependent error is a released bit (class 2).

-- @ if_string_eq_int: the issue's example, comparison forces VARCHAR -> INTEGER
$DP ANON_SUM(salary, 0, 200) AS s FROM Users WHERE IF(uid = 7, 'x', '0') = 0

-- @ binary_search_salary: one step of a binary search on the victim's salary
$DP ANON_COUNT(*, 1) AS c FROM Users WHERE IF(uid = 7 AND salary > 120, 'x', '1') = 1

-- @ case_string_eq_int: CASE yielding a non-numeric string compared with a number
$DP ANON_COUNT(*, 1) AS c FROM Users WHERE CASE WHEN salary > 120 THEN 'big' ELSE '5' END > 3

-- @ in_list_cast: an IN list of numbers against a string column
$DP ANON_COUNT(*, 1) AS c FROM Users WHERE IF(salary > 120, 'no', '1') IN (1, 2, 3)

-- @ join_condition_cast: a join condition comparing a string to an integer
$DP ANON_COUNT(*, 1) AS c FROM Users U JOIN Depts D ON IF(U.salary > 120, 'no', '1') = D.floor

-- @ date_string_cast: a string compared to a DATE
$DP ANON_COUNT(*, 1) AS c FROM Users WHERE IF(uid = 7, 'not a date', '2020-01-01') = joined

-- @ name_to_int: a private name compared with an integer
$DP ANON_COUNT(*, 1) AS c FROM Users WHERE name = 5

-- @ code_between_ints: BETWEEN with integer bounds on a string column
$DP ANON_COUNT(*, 1) AS c FROM Users WHERE code BETWEEN 1 AND 3

-- @ cast_explicit: an explicit CAST that fails on the victim's value
$DP ANON_COUNT(*, 1) AS c FROM Users WHERE CAST(IF(uid = 7, 'x', '1') AS INTEGER) = 1

-- @ cast_double_to_int_overflow: casting 1e300 to BIGINT
$DP ANON_SUM(CAST(salary AS BIGINT), 0, 200) AS s FROM Users

-- @ string_concat_cast: string || integer arithmetic
$DP ANON_COUNT(*, 1) AS c FROM Users WHERE (code || '1') + 1 > 0

-- @ timestamp_string: a timestamp compared to a data-built string
$DP ANON_COUNT(*, 1) AS c FROM Orders WHERE ts > item

-- @ try_cast_ok: TRY_CAST is total (must be accepted and DP, or refused identically)
$DP ANON_COUNT(*, 1) AS c FROM Users WHERE TRY_CAST(code AS INTEGER) IS NULL

-- @ coalesce_mixed_types: COALESCE mixing VARCHAR and INTEGER
$DP ANON_COUNT(*, 1) AS c FROM Users WHERE COALESCE(dept, 0) = 0

-- @ interval_cast: a string cast to INTERVAL
$DP ANON_COUNT(*, 1) AS c FROM Users WHERE joined + CAST(IF(uid = 7, 'x', '1 day') AS INTERVAL) > DATE '2000-01-01'
