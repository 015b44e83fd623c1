-- Text literals meeting dates (red team, issue 9): DuckDB converts the literal only on the rows
-- that need it (COALESCE, CASE, IN, BETWEEN), so an invalid one failed for one unit's rows only.

-- @ coalesce_invalid_date: the literal is converted only where the victim's date is NULL
$DP dept, ANON_COUNT(*, 5) AS c FROM Users WHERE COALESCE(joined, '2020-02-30') IS NULL GROUP BY dept

-- @ coalesce_word: a non-date word as the COALESCE fallback
$DP dept, ANON_COUNT(*, 5) AS c FROM Users WHERE COALESCE(joined, 'x') IS NULL GROUP BY dept

-- @ in_list_after_filter: an IN list converted only for rows that pass the filter
$DP dept, ANON_COUNT(*, 5) AS c FROM Users WHERE dept = 'Zeta' AND joined IN ('x') GROUP BY dept

-- @ case_branch_word: a CASE branch with an invalid date text chosen by the victim's uid
$DP dept, ANON_COUNT(*, 5) AS c FROM Users WHERE CASE WHEN uid = 7 THEN joined ELSE 'x' END = DATE '2020-01-01' GROUP BY dept

-- @ if_far_year: a year out of DuckDB's range
$DP dept, ANON_COUNT(*, 5) AS c FROM Users WHERE IF(uid = 7, joined, '99999999-01-01') IS NULL GROUP BY dept

-- @ between_words: BETWEEN two words on a date
$DP dept, ANON_COUNT(*, 5) AS c FROM Users WHERE joined BETWEEN 'x' AND 'y' GROUP BY dept

-- @ timestamp_bad_hour: hour 25 against a TIMESTAMP column
$DP item, ANON_COUNT(*, 5) AS c FROM Orders WHERE COALESCE(ts, '2020-02-03 25:00') IS NULL GROUP BY item

-- @ having_in_subquery: an invalid timestamp text in a private subquery's HAVING
$DP item, ANON_SUM(x, 0, 10) AS c FROM (SELECT uid, item, MIN(day) AS x FROM Orders GROUP BY uid, item HAVING MIN(ts) > 'x') o GROUP BY item

-- @ valid_literal_released: a valid date text is fine (control)
$DP dept, ANON_COUNT(*, 5) AS c FROM Users WHERE COALESCE(joined, '2020-01-01') > '2020-06-01' GROUP BY dept
