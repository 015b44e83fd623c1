-- Functions and operators that raise on some values (class 2).

-- @ bit_shift_large: a shift by a data-dependent amount errors on overflow
$DP ANON_COUNT(*, 1) AS c FROM Users WHERE (1 << CAST(IF(uid = 7, 70, 1) AS INTEGER)) > 0

-- @ bit_shift_age: a shift by the victim's age
$DP ANON_COUNT(*, 1) AS c FROM Users WHERE (CAST(1 AS BIGINT) << age) > 0

-- @ similar_to_data_pattern: SIMILAR TO with a pattern built from data
$DP ANON_COUNT(*, 1) AS c FROM Orders WHERE 'a' SIMILAR TO item

-- @ similar_to_try: SIMILAR TO inside TRY still raises
$DP ANON_COUNT(*, 1) AS c FROM Orders WHERE TRY('a' SIMILAR TO (item || '(')) IS NULL

-- @ like_escape_data: LIKE ... ESCAPE with a data-built escape string
$DP ANON_COUNT(*, 1) AS c FROM Users WHERE 'x' LIKE 'x' ESCAPE IF(uid = 7, 'ab', '!')

-- @ like_pattern_column: LIKE with a private column as the pattern
$DP ANON_COUNT(*, 1) AS c FROM Users WHERE name LIKE code

-- @ regexp_data_pattern: regexp_matches with a data pattern
$DP ANON_COUNT(*, 1) AS c FROM Orders WHERE regexp_matches('abc', item)

-- @ regexp_replace_data_pattern: regexp_replace with a data pattern
$DP ANON_COUNT(*, 1) AS c FROM Orders WHERE regexp_replace('abc', item, 'x') = 'x'

-- @ scalar_subquery_arith: arithmetic next to a public scalar subquery
$DP ANON_COUNT(*, 1) AS c FROM Users WHERE age * (SELECT MAX(g) FROM Pub) * 100000000000000000 > 0

-- @ scalar_subquery_int_overflow: age + a huge public scalar
$DP ANON_COUNT(*, 1) AS c FROM Users WHERE age + (SELECT CAST(9223372036854775807 AS BIGINT) - 10) > 0

-- @ sum_distinct_overflow: SUM(DISTINCT) over int64-edge values overflows
$DP ANON_SUM(s, 0, 100) AS s FROM (SELECT uid, SUM(DISTINCT qty) AS s FROM Orders GROUP BY uid) x

-- @ sum_overflow_per_unit: per-unit SUM of int64-edge values overflows
$DP ANON_SUM(s, 0, 100) AS s FROM (SELECT uid, SUM(qty) AS s FROM Orders GROUP BY uid) x

-- @ multiply_overflow: integer multiplication overflows on 2^62
$DP ANON_SUM(qty * 4, 0, 100) AS s FROM Orders

-- @ add_overflow: integer addition overflows on 2^62
$DP ANON_SUM(qty + qty + qty, 0, 100) AS s FROM Orders

-- @ negate_min: abs/negation at the int64 edge
$DP ANON_SUM(abs(day * 2), 0, 100) AS s FROM Orders

-- @ division_by_zero_int: integer division by a data-dependent zero
$DP ANON_COUNT(*, 1) AS c FROM Users WHERE 10 // (uid - 7) > 0

-- @ modulo_zero: modulo by zero
$DP ANON_COUNT(*, 1) AS c FROM Users WHERE 10 % (uid - 7) = 0

-- @ ln_negative: ln of a negative value
$DP ANON_SUM(ln(amount), 0, 100) AS s FROM Orders

-- @ sqrt_negative: sqrt of a negative amount
$DP ANON_SUM(sqrt(amount), 0, 100) AS s FROM Orders

-- @ pow_overflow: power overflowing a double
$DP ANON_SUM(pow(amount, 10), 0, 100) AS s FROM Orders

-- @ repeat_huge: repeat() with a data-dependent count
$DP ANON_COUNT(*, 1) AS c FROM Users WHERE length(repeat('x', IF(uid = 7, 100000000000, 1))) > 0

-- @ error_function: error() raises on demand
$DP ANON_COUNT(*, 1) AS c FROM Users WHERE IF(uid = 7, error('boom'), TRUE)

-- @ date_arith_overflow: adding days to year 9999
$DP ANON_COUNT(*, 1) AS c FROM Users WHERE joined + INTERVAL 1000 YEAR > DATE '2000-01-01'

-- @ make_date_invalid: make_date from data
$DP ANON_COUNT(*, 1) AS c FROM Users WHERE make_date(2020, 1, CAST(age AS INTEGER)) > DATE '2000-01-01'

-- @ substring_negative_len: string functions with data arguments
$DP ANON_COUNT(*, 1) AS c FROM Users WHERE substring(name, 1, age) = 'x'

-- @ list_index_error: list indexing / array functions with data
$DP ANON_COUNT(*, 1) AS c FROM Users WHERE list_element([1, 2], age) = 1

-- @ json_parse_error: json extraction from private text
$DP ANON_COUNT(*, 1) AS c FROM Users WHERE json_extract(name, '$.a') IS NULL

-- @ strptime_error: strptime with private text
$DP ANON_COUNT(*, 1) AS c FROM Users WHERE strptime(name, '%Y') IS NULL

-- @ hash_of_unit: hash() as an order-preserving leak of membership
$DP ANON_COUNT(*, 1) AS c FROM Users WHERE hash(uid) % 2 = 0
