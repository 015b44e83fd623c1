-- @ allowlisted_expressions: ok
$DP ANON_SUM(ABS(salary - 50), 0, 100) AS s FROM Users WHERE age BETWEEN 20 AND 60
-- @ regexp_function: DPX-A001
$DP ANON_COUNT(*, 1) AS c FROM Users WHERE regexp_matches(name, 'user1.*')
-- @ data_built_like_pattern: DPX-A002
$DP ANON_COUNT(*, 1) AS c FROM Users WHERE name LIKE code
-- @ scalar_subquery_of_many_rows: DPX-A006
$DP ANON_COUNT(*, 1) AS c FROM Users WHERE age = (SELECT g FROM Pub)
