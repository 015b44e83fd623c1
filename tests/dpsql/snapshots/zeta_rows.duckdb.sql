WITH src AS (
  SELECT
    Orders.uid AS _uid,
    amount AS a0
  FROM Orders
), rows_keyed AS (
  SELECT
    *,
    RANDOM() AS _rr
  FROM src
), rows_ranked AS (
  SELECT
    *,
    ROW_NUMBER() OVER (PARTITION BY _uid, (
      a0 IS NULL
    ) ORDER BY _rr) AS rn_a0
  FROM rows_keyed
), per_user AS (
  SELECT
    _uid,
    COUNT(a0) FILTER(WHERE
      rn_a0 <= 5 AND NOT a0 IS NULL) AS p0n,
    SUM(
      CAST(ROUND((
        LEAST(GREATEST(CAST(a0 AS DOUBLE), 0), 10) - 5
      ) * 262144) AS BIGINT)
    ) FILTER(WHERE
      rn_a0 <= 5 AND NOT a0 IS NULL) AS p0s,
    SUM(
      CAST(ROUND(
        (
          LEAST(GREATEST(CAST(a0 AS DOUBLE), 0), 10) * LEAST(GREATEST(CAST(a0 AS DOUBLE), 0), 10) - 50
        ) * 16384
      ) AS BIGINT)
    ) FILTER(WHERE
      rn_a0 <= 5 AND NOT a0 IS NULL) AS p0q,
    LIST(LEAST(GREATEST(CAST(a0 AS DOUBLE), 0), 10)) FILTER(WHERE
      rn_a0 <= 5 AND NOT a0 IS NULL) AS p1
  FROM rows_ranked
  WHERE
    NOT _uid IS NULL
  GROUP BY
    _uid
), keyed AS (
  SELECT
    *,
    RANDOM() AS _r
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
    ROW_NUMBER() OVER (PARTITION BY _uid ORDER BY _r) <= 1
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
    SUM(p0n) AS n0,
    SUM(p0s) AS s0,
    SUM(p0q) AS q0,
    FLATTEN(LIST(p1)) AS l1
  FROM clamped
)
SELECT
  *
FROM cross_user
