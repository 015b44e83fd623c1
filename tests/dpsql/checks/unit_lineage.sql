-- @ renamed_unit_is_followed: ok
$DP ANON_COUNT(*, 1) AS c FROM (SELECT uid AS person, dept FROM Users) u
-- @ group_by_computed_unit: DPX-V028
$DP uid + 0 AS k, ANON_COUNT(*, 1) AS c FROM Users GROUP BY uid + 0
-- @ group_by_renamed_unit: DPX-V028
$DP s.p, ANON_COUNT(*, 1) AS c FROM (SELECT uid AS p, uid FROM Users) s GROUP BY s.p
