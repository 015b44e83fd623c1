WITH src AS (
  SELECT
    Orders.uid AS _uid,
    amount AS a0
  FROM Orders
), rows_keyed AS (
  SELECT
    *,
    RAND() AS _rr
  FROM src
), rows_ranked AS (
  SELECT
    *,
    ROW_NUMBER() OVER (PARTITION BY _uid, (
      a0 IS NULL
    ) ORDER BY _rr NULLS LAST) AS rn_a0
  FROM rows_keyed
), per_user AS (
  SELECT
    _uid,
    COUNT(IF(rn_a0 <= 5 AND NOT a0 IS NULL, a0, NULL)) AS p0n,
    SUM(
      IF(
        rn_a0 <= 5 AND NOT a0 IS NULL,
        CAST(ROUND((
          LEAST(GREATEST(CAST(a0 AS FLOAT64), 0), 10) - 5
        ) * 262144) AS INT64),
        NULL
      )
    ) AS p0s,
    SUM(
      IF(
        rn_a0 <= 5 AND NOT a0 IS NULL,
        CAST(ROUND(
          (
            LEAST(GREATEST(CAST(a0 AS FLOAT64), 0), 10) * LEAST(GREATEST(CAST(a0 AS FLOAT64), 0), 10) - 50
          ) * 16384
        ) AS INT64),
        NULL
      )
    ) AS p0q,
    ARRAY_AGG(
      IF(rn_a0 <= 5 AND NOT a0 IS NULL, LEAST(GREATEST(CAST(a0 AS FLOAT64), 0), 10), NULL)
     IGNORE NULLS) AS p1
  FROM rows_ranked
  WHERE
    NOT _uid IS NULL
  GROUP BY
    _uid
), keyed AS (
  SELECT
    *,
    RAND() AS _r
  FROM per_user
), sampled AS (
  SELECT
    _uid,
    p0n,
    p0s,
    p0q,
    p1
  FROM keyed
  QUALIFY
    ROW_NUMBER() OVER (PARTITION BY _uid ORDER BY _r NULLS LAST) <= 1
), clamped AS (
  SELECT
    _uid,
    p0n,
    p0s,
    p0q,
    p1
  FROM sampled
), cross_user AS (
  SELECT
    COUNT(*) AS n_units,
    SUM(CAST(p0n AS BIGNUMERIC)) AS n0,
    SUM(CAST(p0s AS BIGNUMERIC)) AS s0,
    SUM(CAST(p0q AS BIGNUMERIC)) AS q0,
    ARRAY_CONCAT_AGG(p1) AS l1
  FROM clamped
)
SELECT
  *
FROM cross_user
