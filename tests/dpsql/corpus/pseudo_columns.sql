-- Row-order attributes that shift when one unit is removed (class 3), and window functions.

-- @ rowid_key: rowid as a released key (certain membership)
$DP rowid AS r, ANON_COUNT(*, 1) AS c FROM Users GROUP BY rowid

-- @ rowid_bucket_key: rowid buckets shift when the victim's 40 orders go
$DP rowid // 50 AS b, ANON_COUNT(*, 5) AS c FROM Orders GROUP BY rowid // 50

-- @ rowid_filter: the first rows belong to the victim
$DP ANON_SUM(amount, 0, 100) AS s FROM Orders WHERE rowid < 40

-- @ rowid_in_subquery: rowid projected through a subquery
$DP ANON_COUNT(*, 1) AS c FROM (SELECT uid, rowid AS r FROM Orders) x WHERE r = 0

-- @ positional_join: POSITIONAL JOIN pairs rows by position
$DP ANON_SUM(p.g, 0, 100) AS s FROM Users u POSITIONAL JOIN Pub p

-- @ positional_join_private: POSITIONAL JOIN of two private tables
$DP ANON_COUNT(*, 1) AS c FROM Users u POSITIONAL JOIN Orders o WHERE o.amount > 1000

-- @ asof_join: ASOF JOIN matches the nearest row of another unit
$DP ANON_COUNT(*, 1) AS c FROM Users u ASOF JOIN Orders o ON u.age >= o.day

-- @ row_number_window: ROW_NUMBER over all rows ranks units against each other
$DP ANON_SUM(r, 0, 100) AS s FROM (SELECT uid, ROW_NUMBER() OVER (ORDER BY salary) AS r FROM Users) x

-- @ window_sum_all_units: SUM() OVER () gives every row the total of all units
$DP ANON_SUM(t, 0, 100000) AS s FROM (SELECT uid, SUM(amount) OVER () AS t FROM Orders) x

-- @ window_lag: LAG reads the previous unit's salary
$DP ANON_SUM(prev, 0, 200) AS s FROM (SELECT uid, LAG(salary) OVER (ORDER BY uid) AS prev FROM Users) x

-- @ window_partition_by_uid: a per-unit window (bounded, may be allowed)
$DP ANON_SUM(t, 0, 100) AS s FROM (SELECT uid, SUM(amount) OVER (PARTITION BY uid) AS t FROM Orders) x

-- @ window_count_as_key: a window count released as a key (the victim's order count)
$DP n, ANON_COUNT(*, 5) AS c FROM (SELECT uid, COUNT(*) OVER (PARTITION BY uid) AS n FROM Orders) x GROUP BY n

-- @ ntile_window: NTILE over the whole table
$DP b, ANON_COUNT(*, 1) AS c FROM (SELECT uid, NTILE(4) OVER (ORDER BY salary) AS b FROM Users) x GROUP BY b

-- @ qualify_window: QUALIFY with a window over all units
$DP ANON_COUNT(*, 1) AS c FROM (SELECT uid FROM Users QUALIFY ROW_NUMBER() OVER (ORDER BY salary DESC) = 1) x

-- @ file_row_number: pseudo-column file_row_number / virtual columns
$DP ANON_COUNT(*, 1) AS c FROM Users WHERE file_row_number = 0
