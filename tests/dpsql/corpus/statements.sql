-- Non-SELECT statements and sandbox escapes.

-- @ pragma: PRAGMA statement
PRAGMA table_info('Users')

-- @ set_threads: SET statement
SET threads = 64

-- @ attach: ATTACH a database file
ATTACH '/tmp/x.db' AS x

-- @ copy_to: COPY a private table out
COPY Users TO '/tmp/users.csv'

-- @ install_extension: INSTALL httpfs
INSTALL httpfs

-- @ load_extension: LOAD an extension
LOAD httpfs

-- @ create_table_as: CREATE TABLE AS
CREATE TABLE leak AS SELECT * FROM Users

-- @ update_private: UPDATE a private table
UPDATE Users SET salary = 0

-- @ export_database: EXPORT DATABASE
EXPORT DATABASE '/tmp/dump'

-- @ set_then_dp: SET before a DP query
SET memory_limit = '100GB'; $DP ANON_COUNT(*, 5) AS c FROM Users

-- @ dp_then_drop: a DP query followed by DROP
$DP ANON_COUNT(*, 5) AS c FROM Users; DROP TABLE Users

-- @ call_function: CALL pragma function
CALL duckdb_settings()

-- @ summarize: SUMMARIZE a private table
SUMMARIZE Users

-- @ describe: DESCRIBE a query over private data
DESCRIBE SELECT * FROM Users WHERE salary > 120
