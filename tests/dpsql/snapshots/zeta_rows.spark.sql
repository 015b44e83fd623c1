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
    COLLECT_LIST(LEAST(GREATEST(CAST(a0 AS DOUBLE), 0), 10)) FILTER(WHERE
      rn_a0 <= 5 AND NOT a0 IS NULL) AS p1
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
  FROM (
    SELECT
      _uid,
      p0n,
      p0s,
      p0q,
      p1,
      ROW_NUMBER() OVER (PARTITION BY _uid ORDER BY _r NULLS LAST) AS _w
    FROM keyed
  ) AS _t
  WHERE
    _w <= 1
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
    SUM(CAST(p0n AS DECIMAL(38, 0))) AS n0,
    SUM(CAST(p0s AS DECIMAL(38, 0))) AS s0,
    SUM(CAST(p0q AS DECIMAL(38, 0))) AS q0,
    FLATTEN(COLLECT_LIST(p1)) AS l1
  FROM clamped
)
SELECT
  *
FROM cross_user
