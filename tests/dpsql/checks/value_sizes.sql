-- @ modest_replace_and_concat: ok
$DP U.dept, ANON_COUNT(*, 1) AS c FROM Users U WHERE REPLACE(U.dept, 'a', 'bb') || '-' || UPPER(U.dept) <> 'x' GROUP BY U.dept
-- @ text_cut_before_it_grows: ok
$DP ANON_COUNT(*, 1) AS c FROM Users U WHERE LENGTH(REPLACE(REPLACE(LEFT(U.dept, 5), 'a', LEFT(U.dept, 5)), 'a', 'xyz')) > 3
-- @ replace_nested_three_times_on_the_target: DPX-V041
$DP ANON_COUNT(*, 1) AS c FROM (SELECT uid, REPLACE(t2, 'a', t2) AS t3 FROM (SELECT uid, REPLACE(t1, 'a', t1) AS t2 FROM (SELECT uid, REPLACE(s, 'a', s) AS t1 FROM (SELECT uid, IF(uid = 7, 'aaaaaaaaaa', 'b') AS s FROM Users) a) b) c) d WHERE LENGTH(d.t3) > 5
-- @ growth_hidden_in_a_derived_table: DPX-V041
$DP ANON_COUNT(*, 1) AS c FROM (SELECT uid, REPLACE(REPLACE(dept, 'a', dept), 'e', REPLACE(dept, 'a', dept)) AS s FROM Users) t WHERE LENGTH(REPLACE(REPLACE(t.s, 'b', t.s), 'c', REPLACE(t.s, 'b', t.s))) > 1
