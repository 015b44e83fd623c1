-- Computations over a private subquery's aggregates (red team, issue 9): TRY cannot wrap an
-- aggregate, so a function that can raise on an aggregate's value failed for one unit only.

-- @ substring_of_aggregates: substring with a start from MIN(day) (-2^62 for the huge victim)
$DP item, ANON_SUM(x, 0, 10) AS c FROM (SELECT uid, item, substring(MIN(item), MIN(day)) AS y, 1 AS x FROM Orders GROUP BY uid, item) o WHERE y = 'a' GROUP BY item

-- @ date_trunc_of_aggregates: date_trunc with a part taken from an aggregate
$DP y, ANON_SUM(x, 0, 10) AS c FROM (SELECT uid, item, date_trunc(MIN(item), MIN(ts)) AS y, 1 AS x FROM Orders GROUP BY uid, item) o GROUP BY y

-- @ abs_of_min: abs of an aggregate (abs of the smallest integer overflows)
$DP item, ANON_SUM(x, 0, 10) AS c FROM (SELECT uid, item, abs(MIN(day)) AS x FROM Orders GROUP BY uid, item) o GROUP BY item

-- @ paren_aggregate_overflow: a parenthesised aggregate plus the largest integer
$DP item, ANON_SUM(x, 0, 10) AS c FROM (SELECT uid, item, (MIN(day)) + 9223372036854775807 AS x FROM Orders GROUP BY uid, item) o GROUP BY item

-- @ case_aggregate_overflow: CASE around an aggregate, then integer overflow
$DP item, ANON_SUM(x, 0, 10) AS c FROM (SELECT uid, item, (CASE WHEN true THEN MIN(day) END) - 9223372036854775807 AS x FROM Orders GROUP BY uid, item) o GROUP BY item

-- @ coalesce_aggregate_overflow: COALESCE around an aggregate, then integer overflow
$DP item, ANON_SUM(x, 0, 10) AS c FROM (SELECT uid, item, COALESCE(MIN(day), 0) * 4 AS x FROM Orders GROUP BY uid, item) o GROUP BY item

-- @ nested_negation: negations and products of an aggregate
$DP item, ANON_SUM(x, 0, 10) AS c FROM (SELECT uid, item, -(-MIN(day) * 4) AS x FROM Orders GROUP BY uid, item) o GROUP BY item

-- @ product_of_sums: SUM(qty) * SUM(qty) (2^124 for the huge victim)
$DP item, ANON_SUM(x, 0, 10) AS c FROM (SELECT uid, item, SUM(qty) * SUM(qty) AS x FROM Orders GROUP BY uid, item) o GROUP BY item

-- @ interval_over_aggregate: a huge interval added to an aggregate in HAVING
$DP item, ANON_SUM(x, 0, 10) AS c FROM (SELECT uid, item, 1 AS x FROM Orders GROUP BY uid, item HAVING MIN(ts) + INTERVAL 100000 YEAR > TIMESTAMP '2020-01-01') o GROUP BY item

-- @ having_overflow: integer overflow in a private subquery's HAVING
$DP item, ANON_SUM(x, 0, 10) AS c FROM (SELECT uid, item, MIN(day) AS x FROM Orders GROUP BY uid, item HAVING MIN(day) + 9223372036854775807 > 0) o GROUP BY item
