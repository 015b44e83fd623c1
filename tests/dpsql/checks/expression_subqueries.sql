-- @ public_in_list: ok
$DP ANON_COUNT(*, 1) AS c FROM Users WHERE dept IN (SELECT dept FROM Depts)
-- @ private_scalar_subquery: DPX-V016
$DP ANON_COUNT(*, 1) AS c FROM Users WHERE age > (SELECT MAX(age) FROM Users)
-- @ private_exists: DPX-V016
$DP ANON_COUNT(*, 1) AS c FROM Users U WHERE EXISTS (SELECT 1 FROM Orders O WHERE O.uid = U.uid)
