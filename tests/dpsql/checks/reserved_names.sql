-- @ ordinary_alias: ok
$DP ANON_COUNT(*, 1) AS dpx_count FROM Users
-- @ internal_prefix: DPX-V034
$DP ANON_COUNT(*, 1) AS __dpx_row FROM Users
