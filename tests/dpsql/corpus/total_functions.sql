-- Functions and conversions that can raise on some argument values (class 2: the expression
-- language must be total). The HUGE victim has age 2^62, qty 2^62, salary 1e300, amounts
-- -1e300, a 5000-character name and the date 9999-12-31.

-- @ nan_into_sum: a NaN value inside a clamped sum (NaN cannot be scaled to an integer)
$DP ANON_SUM(CASE WHEN uid = 7 THEN CAST('nan' AS DOUBLE) ELSE 1.0 END, 0, 100) AS s FROM Users

-- @ inf_into_avg: an infinite value inside a clamped average
$DP ANON_AVG(amount * 1e308, 0, 100) AS a FROM Orders

-- @ inf_minus_inf_inner: a per-unit inner aggregate that becomes NaN
$DP ANON_SUM(s, 0, 100) AS t FROM (SELECT uid, SUM(amount * 1e10) - SUM(amount * 1e10) AS s FROM Orders GROUP BY uid) x

-- @ hugeint_square: a per-unit HUGEINT sum squared overflows
$DP ANON_SUM(s, 0, 100) AS t FROM (SELECT uid, SUM(qty) * SUM(qty) AS s FROM Orders GROUP BY uid) x

-- @ cast_to_integer_overflow: CAST of a 2^62 age to INTEGER
$DP ANON_SUM(CAST(age AS INTEGER), 0, 100) AS s FROM Users

-- @ cast_to_tinyint: CAST to TINYINT
$DP ANON_COUNT(*, 1) AS c FROM Users WHERE CAST(age AS TINYINT) > 0

-- @ implicit_int32_function: a function taking INTEGER given a 2^62 BIGINT
$DP ANON_COUNT(*, 1) AS c FROM Users WHERE left(name, age) <> ''

-- @ date_plus_days_overflow: DATE + a huge number of days
$DP ANON_COUNT(*, 1) AS c FROM Users WHERE joined + CAST(age AS INTEGER) > DATE '2000-01-01'

-- @ date_diff_times_big: a date difference multiplied into overflow
$DP ANON_SUM(date_diff('day', DATE '2000-01-01', joined) * 1000000000000000, 0, 100) AS s FROM Users

-- @ epoch_ms_overflow: epoch_ms of a 2^62 value
$DP ANON_COUNT(*, 1) AS c FROM Users WHERE epoch_ms(age) > TIMESTAMP '2000-01-01'

-- @ to_timestamp_overflow: to_timestamp of salary 1e300
$DP ANON_COUNT(*, 1) AS c FROM Users WHERE to_timestamp(salary) > TIMESTAMP '2000-01-01'

-- @ factorial_overflow: factorial of a private integer
$DP ANON_COUNT(*, 1) AS c FROM Users WHERE factorial(CAST(age AS INTEGER)) > 0

-- @ chr_invalid: chr() of an invalid code point
$DP ANON_COUNT(*, 1) AS c FROM Users WHERE chr(CAST(age AS INTEGER)) <> ''

-- @ format_string_from_data: format() with a data-built format string
$DP ANON_COUNT(*, 1) AS c FROM Users WHERE format(code, 1) <> ''

-- @ printf_from_data: printf() with a private format
$DP ANON_COUNT(*, 1) AS c FROM Users WHERE printf(code) <> ''

-- @ strftime_format_from_data: strftime with a private format string
$DP ANON_COUNT(*, 1) AS c FROM Users WHERE strftime(joined, code) <> ''

-- @ range_list_huge: a list of 2^62 elements
$DP ANON_COUNT(*, 1) AS c FROM Users WHERE len(range(age)) > 0

-- @ repeat_by_age: repeat() with a 2^62 count
$DP ANON_COUNT(*, 1) AS c FROM Users WHERE length(repeat('x', age)) > 0

-- @ round_by_age: round() with a data precision
$DP ANON_SUM(round(salary, CAST(age AS INTEGER)), 0, 100) AS s FROM Users

-- @ gcd_min: integer functions at the int64 edge
$DP ANON_SUM(gcd(day, 0), 0, 100) AS s FROM Orders

-- @ negate_int64_edge: unary minus in a per-unit aggregate at the edge
$DP ANON_SUM(s, 0, 100) AS t FROM (SELECT uid, -MIN(day) * 4 AS s FROM Orders GROUP BY uid) x

-- @ list_slice_data: list functions with data indexes
$DP ANON_COUNT(*, 1) AS c FROM Users WHERE [1, 2, 3][age] IS NULL

-- @ sum_double_overflow_per_unit: a per-unit SUM of doubles becomes -inf
$DP ANON_AVG(s, -100, 100) AS a FROM (SELECT uid, SUM(amount) * 1e10 AS s FROM Orders GROUP BY uid) x
