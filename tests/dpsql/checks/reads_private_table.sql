-- @ private_table: ok
$DP ANON_COUNT(*, 1) AS c FROM Users
-- @ public_only: DPX-V014
$DP ANON_COUNT(*, 1) AS c FROM Pub
