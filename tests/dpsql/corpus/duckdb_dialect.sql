-- DuckDB dialect features the resolver may not know (red team, issue 9): each is refused before
-- data is read, or released with the DP contract intact on both neighbours.

-- @ qualify_on_dp: QUALIFY over the DP select
$DP dept, ANON_COUNT(*, 5) AS c FROM Users GROUP BY dept QUALIFY c > 0

-- @ using_sample: DuckDB's USING SAMPLE on a private table
$DP dept, ANON_COUNT(*, 5) AS c FROM Users USING SAMPLE 50% GROUP BY dept

-- @ pivot_private: PIVOT of a private table in FROM
$DP dept, ANON_COUNT(*, 5) AS c FROM (PIVOT Users ON dept USING count(*)) p GROUP BY dept

-- @ lateral_subquery: LATERAL re-reading a private row
$DP x.dept, ANON_COUNT(*, 5) AS c FROM Users u, LATERAL (SELECT u.dept) x GROUP BY x.dept

-- @ unnest_list: UNNEST turning one row into several
$DP d, ANON_COUNT(*, 5) AS c FROM (SELECT uid, UNNEST([dept, dept]) AS d FROM Users) s GROUP BY d

-- @ list_literal_key: a list literal as a group key
$DP [dept] AS d, ANON_COUNT(*, 5) AS c FROM Users GROUP BY [dept]

-- @ struct_literal_key: a struct literal as a group key
$DP {'a': dept} AS d, ANON_COUNT(*, 5) AS c FROM Users GROUP BY 1

-- @ lambda_list_transform: a lambda over a list built from private data
$DP list_transform([salary], x -> x + 1) AS d, ANON_COUNT(*, 5) AS c FROM Users GROUP BY 1

-- @ list_comprehension: DuckDB's list comprehension
$DP [x + 1 for x in [salary]] AS d, ANON_COUNT(*, 5) AS c FROM Users GROUP BY 1

-- @ columns_star: COLUMNS(*) in a private subquery
$DP dept, ANON_COUNT(*, 5) AS c FROM (SELECT COLUMNS(*) FROM Users) u GROUP BY dept

-- @ group_by_all: GROUP BY ALL in the DP select
$DP dept, ANON_COUNT(*, 5) AS c FROM Users GROUP BY ALL

-- @ group_by_all_subquery: GROUP BY ALL in a private subquery (groups without the unit)
$DP item, ANON_SUM(x, 0, 10) AS c FROM (SELECT uid, item, MIN(day) AS x FROM Orders GROUP BY ALL) o GROUP BY item

-- @ grouping_sets_subquery: GROUPING SETS adding rows without the unit
$DP item, ANON_SUM(x, 0, 10) AS c FROM (SELECT uid, item, MIN(day) AS x FROM Orders GROUP BY GROUPING SETS ((uid, item), (item))) o GROUP BY item

-- @ rollup_subquery: ROLLUP in a private subquery
$DP item, ANON_SUM(x, 0, 10) AS c FROM (SELECT uid, item, MIN(day) AS x FROM Orders GROUP BY ROLLUP (uid, item)) o GROUP BY item

-- @ order_by_all: ORDER BY ALL over released rows
$DP dept, ANON_COUNT(*, 5) AS c FROM Users GROUP BY dept ORDER BY ALL

-- @ from_first: FROM-first syntax
FROM Users SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1, delta = 1e-5, max_groups_contributed = 1) dept, ANON_COUNT(*, 5) AS c GROUP BY dept

-- @ range_table_function: range() joined to private rows
$DP dept, ANON_COUNT(*, 5) AS c FROM Users JOIN range(10) r ON true GROUP BY dept

-- @ string_slice: s[1:2] slicing
$DP dept, ANON_COUNT(*, 5) AS c FROM Users WHERE name[1:2] = 'us' GROUP BY dept

-- @ double_colon_cast: name::INT (run as TRY_CAST)
$DP dept, ANON_COUNT(*, 5) AS c FROM Users WHERE name::INT = 3 GROUP BY dept

-- @ json_arrow: ->> on a text column (JSON parse errors)
$DP dept, ANON_COUNT(*, 5) AS c FROM Users WHERE name ->> '$.a' = 'x' GROUP BY dept

-- @ collate: COLLATE on a private column
$DP dept, ANON_COUNT(*, 5) AS c FROM Users WHERE name COLLATE nocase = 'X' GROUP BY dept

-- @ between_symmetric: BETWEEN SYMMETRIC with reversed bounds
$DP dept, ANON_COUNT(*, 5) AS c FROM Users WHERE salary BETWEEN SYMMETRIC 200 AND 100 GROUP BY dept

-- @ is_distinct_from_victim: IS DISTINCT FROM singling out one unit
$DP dept, ANON_COUNT(*, 5) AS c FROM Users WHERE uid IS DISTINCT FROM 7 GROUP BY dept

-- @ interval_overflow: a date plus a huge interval
$DP dept, ANON_COUNT(*, 5) AS c FROM Users WHERE joined + INTERVAL 10000000 DAY > DATE '2020-01-01' GROUP BY dept

-- @ date_plus_int_overflow: a date plus a huge integer
$DP dept, ANON_COUNT(*, 5) AS c FROM Users WHERE joined + 3000000 > DATE '2020-01-01' GROUP BY dept

-- @ date_trunc_part_from_data: date_trunc with a part chosen by the victim's uid
$DP dept, ANON_COUNT(*, 5) AS c FROM Users WHERE date_trunc(CASE WHEN uid = 7 THEN 'bogus' ELSE 'day' END, joined) IS NULL GROUP BY dept

-- @ date_diff_part_from_data: date_diff with a part chosen from data
$DP dept, ANON_COUNT(*, 5) AS c FROM Users WHERE date_diff(CASE WHEN uid = 7 THEN 'bogus' ELSE 'day' END, joined, joined) = 0 GROUP BY dept

-- @ substring_negative_start: substring with a start taken from data
$DP dept, ANON_COUNT(*, 5) AS c FROM Users WHERE substring(name, age, 2) = 'x' GROUP BY dept

-- @ timestamp_literal_compare: a TIMESTAMP column against a text literal (typed, released)
$DP item, ANON_COUNT(*, 5) AS c FROM Orders WHERE ts > '2024-03-01' GROUP BY item

-- @ scalar_subquery_many_rows: a public scalar subquery returning several rows next to a filter
$DP dept, ANON_COUNT(*, 5) AS c FROM Users WHERE dept = 'Zeta' AND uid = (SELECT g FROM Pub) GROUP BY dept

-- @ anti_join_private: ANTI JOIN of private relations on the unit
$DP u.dept, ANON_COUNT(*, 5) AS c FROM Users u ANTI JOIN Orders o ON u.uid = o.uid GROUP BY u.dept

-- @ semi_join_non_unit: SEMI JOIN of private relations not on the unit
$DP u.dept, ANON_COUNT(*, 5) AS c FROM Users u SEMI JOIN Orders o ON u.age = o.qty GROUP BY u.dept

-- @ natural_join_private: NATURAL JOIN of two private tables
$DP dept, ANON_COUNT(*, 5) AS c FROM Users NATURAL JOIN Orders GROUP BY dept

-- @ right_join_public_keys: a public table right-joined to private rows, public keys
$DP p.label, ANON_COUNT(*, 5) AS c, ANON_COUNT(DISTINCT uid) AS n FROM Pub p RIGHT JOIN Users u ON u.age = p.g GROUP BY p.label

-- @ quoted_uid_lookalike: a salary column relabelled "UID" next to the real unit
$DP d, ANON_COUNT(*, 5) AS c FROM (SELECT salary AS "UID", dept AS d, uid AS x FROM Users) s GROUP BY d

-- @ unicode_identifier: a unicode output alias
$DP "dépt", ANON_COUNT(*, 5) AS c FROM (SELECT uid, dept AS "dépt" FROM Users) s GROUP BY "dépt"
