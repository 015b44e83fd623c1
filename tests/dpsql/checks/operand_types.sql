-- @ one_type_family: ok
$DP ANON_COUNT(*, 1) AS c FROM Users WHERE name = 'user3' AND age > 30
-- @ text_compared_with_number: DPX-A010
$DP ANON_COUNT(*, 1) AS c FROM Users WHERE name = 0
-- @ number_as_condition: DPX-A011
$DP ANON_COUNT(*, 1) AS c FROM Users WHERE age
-- @ invalid_date_literal: DPX-A012
$DP ANON_COUNT(*, 1) AS c FROM Users WHERE joined > 'not a date'
