-- Table functions and foreign sources (sandbox; must be refused identically).

-- @ read_csv: reading a file
$DP ANON_COUNT(*, 1) AS c FROM read_csv('/etc/passwd') JOIN Users ON TRUE

-- @ range_cross_join: range() multiplies rows (public-looking source)
$DP ANON_COUNT(*, 1) AS c FROM Users CROSS JOIN range(1000)

-- @ range_as_uid: range() values relabelled as uid
$DP ANON_COUNT(*, 1) AS c FROM (SELECT r.range AS uid FROM range(100) r JOIN Users u ON u.uid = 7) x

-- @ generate_series_join: generate_series joined on the victim's salary
$DP ANON_COUNT(*, 1) AS c FROM Users u JOIN generate_series(1, 200) s(v) ON s.v <= u.salary

-- @ glob_files: glob() lists files
$DP ANON_COUNT(*, 1) AS c FROM glob('/tmp/*') JOIN Users ON TRUE

-- @ unnest_copy: UNNEST copies each row many times
$DP ANON_SUM(salary, 0, 200) AS s FROM Users, UNNEST(range(50)) AS t(x)

-- @ duckdb_tables: catalogue functions
$DP ANON_COUNT(*, 1) AS c FROM duckdb_tables() JOIN Users ON TRUE

-- @ read_parquet: reading a parquet file
$DP ANON_COUNT(*, 1) AS c FROM Users WHERE uid IN (SELECT * FROM read_parquet('/tmp/x.parquet'))

-- @ values_as_table: a VALUES table as the only source joined with a unit filter
$DP ANON_COUNT(*, 1) AS c FROM (VALUES (1), (2)) v(x) JOIN Users u ON u.uid = 7

-- @ range_huge_cross: a runaway cross join of table functions (must stop, never hang)
$DP ANON_COUNT(*, 1) AS c FROM Users WHERE uid IN (SELECT a.range FROM range(100000) a, range(100000) b WHERE a.range + b.range = -1)

-- @ sql_auto_detect: query_table / query functions executing strings
$DP ANON_COUNT(*, 1) AS c FROM query_table('Users')
