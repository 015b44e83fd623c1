-- @ keys_from_a_public_table: ok
SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1, max_groups_contributed = 1, group_selection_strategy = PUBLIC_GROUPS) D.dept, ANON_COUNT(*, 1) AS c FROM Depts D JOIN Users U ON D.dept = U.dept GROUP BY D.dept
-- @ thresholded_private_keys: ok
$DP dept, ANON_COUNT(*, 1) AS c FROM Users GROUP BY dept
-- @ keys_from_a_private_table: DPX-V034
SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1, max_groups_contributed = 1, group_selection_strategy = PUBLIC_GROUPS) U.dept, ANON_COUNT(*, 1) AS c FROM Depts D JOIN Users U ON D.dept = U.dept GROUP BY U.dept
