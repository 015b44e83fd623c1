WITH src AS (
  SELECT
    E.uid AS _uid,
    dept AS k0
  FROM (
    SELECT
      `uid`,
      `dept`
    FROM (
      SELECT
        `uid`,
        `dept`,
        ROW_NUMBER() OVER (PARTITION BY `uid` ORDER BY __dpx_key NULLS LAST) AS __dpx_rank
      FROM (
        SELECT
          *,
          RAND() AS __dpx_key
        FROM Employee
      ) AS __dpx_keyed
    ) AS __dpx_ranked
    WHERE
      __dpx_rank <= 100
  ) AS E
  JOIN (
    SELECT
      `uid`,
      `amount`
    FROM (
      SELECT
        `uid`,
        `amount`,
        ROW_NUMBER() OVER (PARTITION BY `uid` ORDER BY __dpx_key NULLS LAST) AS __dpx_rank
      FROM (
        SELECT
          *,
          RAND() AS __dpx_key
        FROM Orders
      ) AS __dpx_keyed
    ) AS __dpx_ranked
    WHERE
      __dpx_rank <= 100
  ) AS O
    USING (uid)
), per_user AS (
  SELECT
    k0,
    _uid,
    COUNT(*) AS p0
  FROM src
  WHERE
    NOT _uid IS NULL
  GROUP BY
    k0,
    _uid
), keyed AS (
  SELECT
    *,
    RAND() AS _r
  FROM per_user
), sampled AS (
  SELECT
    k0,
    _uid,
    p0
  FROM keyed
  QUALIFY
    ROW_NUMBER() OVER (PARTITION BY _uid ORDER BY _r NULLS LAST) <= 2
), clamped AS (
  SELECT
    k0,
    _uid,
    LEAST(GREATEST(p0, 0), 5) AS c0
  FROM sampled
), cross_user AS (
  SELECT
    k0,
    COUNT(*) AS n_units,
    SUM(CAST(c0 AS BIGNUMERIC)) AS s0
  FROM clamped
  GROUP BY
    k0
)
SELECT
  *
FROM cross_user
