-- Parser-level tricks: placeholders, nesting, reserved names, comments, quoting, case.

-- @ placeholder_question: a ? placeholder (crashed in the issue)
$DP ANON_COUNT(*, 5) AS c FROM Users WHERE uid = ?

-- @ placeholder_dollar: a $1 placeholder
$DP ANON_COUNT(*, 5) AS c FROM Users WHERE uid = $1

-- @ placeholder_in_options: a placeholder as an option value
SELECT WITH ANONYMIZATION OPTIONS (epsilon = ?, delta = 1e-5, max_groups_contributed = 1) ANON_COUNT(*, 5) AS c FROM Users

-- @ nested_parens_3000: 3000 nested parentheses (RecursionError in the issue)
$DP ANON_SUM($OPEN(3000)salary$CLOSE(3000), 0, 200) AS s FROM Users

-- @ nested_subqueries: three nested SELECT * subqueries
$DP ANON_COUNT(*, 5) AS c FROM $OPEN(1)SELECT * FROM $OPEN(1)SELECT * FROM $OPEN(1)SELECT * FROM Users$CLOSE(1) a$CLOSE(1) b$CLOSE(1) z

-- @ deep_where_parens: 1500 parentheses around a WHERE condition
$DP ANON_COUNT(*, 5) AS c FROM Users WHERE $OPEN(1500)uid > 0$CLOSE(1500)

-- @ alias_row: an output alias _row (crashed in the issue)
$DP dept AS _row, ANON_COUNT(*, 5) AS c FROM Users GROUP BY dept

-- @ alias_uid_output: an output alias _uid
$DP dept, ANON_COUNT(*, 5) AS _uid FROM Users GROUP BY dept

-- @ alias_internal_names: output aliases that collide with internal stage columns
$DP dept AS n_units, ANON_COUNT(*, 5) AS k0, ANON_SUM(salary, 0, 200) AS s0 FROM Users GROUP BY dept

-- @ subquery_alias_uid_internal: a subquery column named _uid
$DP ANON_COUNT(*, 5) AS c FROM (SELECT uid, amount AS _uid FROM Orders) x

-- @ comment_hides_clause: a comment hiding part of the query
$DP ANON_COUNT(*, 5) AS c FROM Users -- WHERE uid = 7
/* GROUP BY uid */

-- @ comment_inside_hint: a comment inside the OPTIONS list
SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1, /* epsilon = 1000, */ delta = 1e-5, max_groups_contributed = 1) ANON_COUNT(*, 5) AS c FROM Users

-- @ unicode_homoglyph_uid: a Cyrillic "uіd" homoglyph as a column alias
$DP ANON_COUNT(*, 5) AS c FROM (SELECT amount AS "uіd", uid AS person FROM Orders) x

-- @ unicode_fullwidth: full-width characters in identifiers
$DP ANON_COUNT(*, 5) AS c FROM Ｕsers

-- @ quoted_uid_case: "UID" vs uid (case-insensitive identifiers)
$DP ANON_COUNT(*, 5) AS c FROM (SELECT amount AS "UID", uid AS person FROM Orders) x

-- @ mixed_case_table: mixed case table and column names
$DP DEPT, ANON_COUNT(*, 5) AS c FROM uSeRs GROUP BY DEPT

-- @ quoted_identifier_with_dot: a quoted identifier containing a dot
$DP ANON_COUNT(*, 5) AS c FROM (SELECT uid AS "x.uid", amount AS uid FROM Orders) x

-- @ string_escape_trick: a string literal with quotes and a semicolon
$DP ANON_COUNT(*, 5) AS c FROM Users WHERE name <> 'a''; DROP TABLE Users; --'

-- @ multiple_statements: two statements
$DP ANON_COUNT(*, 5) AS c FROM Users; SELECT * FROM Users

-- @ trailing_semicolons: trailing empty statements
$DP ANON_COUNT(*, 5) AS c FROM Users;;;

-- @ dollar_quoted_string: a dollar-quoted string literal
$DP ANON_COUNT(*, 5) AS c FROM Users WHERE name <> $$x$$

-- @ differential_privacy_form: ZetaSQL form with a relabelled privacy_unit_column
SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 1, delta = 1e-5, max_groups_contributed = 1, privacy_unit_column = uid) COUNT(*, contribution_bounds_per_group => (0, 1)) AS c FROM Orders AS O(person, uid)

-- @ no_dp_clause: a plain SELECT of private rows
SELECT uid, salary FROM Users WHERE uid = 7

-- @ raw_aggregate_top: a non-DP aggregate in the DP select
$DP SUM(salary) AS s FROM Users

-- @ anon_outside_dp: ANON_ functions without the DP clause
SELECT ANON_SUM(salary, 0, 200) FROM Users
