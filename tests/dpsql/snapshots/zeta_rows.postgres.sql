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
      CAST(CASE
        WHEN ABS(
          (
            LEAST(GREATEST(CAST(a0 AS DOUBLE PRECISION), 0), 10) - 5
          ) * 262144 - TRUNC((
            LEAST(GREATEST(CAST(a0 AS DOUBLE PRECISION), 0), 10) - 5
          ) * 262144)
        ) >= 0.5
        THEN TRUNC((
          LEAST(GREATEST(CAST(a0 AS DOUBLE PRECISION), 0), 10) - 5
        ) * 262144) + SIGN((
          LEAST(GREATEST(CAST(a0 AS DOUBLE PRECISION), 0), 10) - 5
        ) * 262144)
        ELSE TRUNC((
          LEAST(GREATEST(CAST(a0 AS DOUBLE PRECISION), 0), 10) - 5
        ) * 262144)
      END AS BIGINT)
    ) FILTER(WHERE
      rn_a0 <= 5 AND NOT a0 IS NULL) AS p0s,
    SUM(
      CAST(CASE
        WHEN ABS(
          (
            LEAST(GREATEST(CAST(a0 AS DOUBLE PRECISION), 0), 10) * LEAST(GREATEST(CAST(a0 AS DOUBLE PRECISION), 0), 10) - 50
          ) * 16384 - TRUNC(
            (
              LEAST(GREATEST(CAST(a0 AS DOUBLE PRECISION), 0), 10) * LEAST(GREATEST(CAST(a0 AS DOUBLE PRECISION), 0), 10) - 50
            ) * 16384
          )
        ) >= 0.5
        THEN TRUNC(
          (
            LEAST(GREATEST(CAST(a0 AS DOUBLE PRECISION), 0), 10) * LEAST(GREATEST(CAST(a0 AS DOUBLE PRECISION), 0), 10) - 50
          ) * 16384
        ) + SIGN(
          (
            LEAST(GREATEST(CAST(a0 AS DOUBLE PRECISION), 0), 10) * LEAST(GREATEST(CAST(a0 AS DOUBLE PRECISION), 0), 10) - 50
          ) * 16384
        )
        ELSE TRUNC(
          (
            LEAST(GREATEST(CAST(a0 AS DOUBLE PRECISION), 0), 10) * LEAST(GREATEST(CAST(a0 AS DOUBLE PRECISION), 0), 10) - 50
          ) * 16384
        )
      END AS BIGINT)
    ) FILTER(WHERE
      rn_a0 <= 5 AND NOT a0 IS NULL) AS p0q,
    ARRAY_AGG(LEAST(GREATEST(CAST(a0 AS DOUBLE PRECISION), 0), 10)) FILTER(WHERE
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
  FROM (
    SELECT
      _uid,
      p0n,
      p0s,
      p0q,
      p1,
      ROW_NUMBER() OVER (PARTITION BY _uid ORDER BY _r) AS _w
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
    COALESCE(
      CAST(STRING_TO_ARRAY(STRING_AGG(NULLIF(ARRAY_TO_STRING(p1, ','), ''), ','), ',') AS DOUBLE PRECISION[]),
      CAST(ARRAY[] AS DOUBLE PRECISION[])
    ) AS l1
  FROM clamped
)
SELECT
  *
FROM cross_user
