WITH src AS (
  SELECT
    E.uid AS _uid,
    dept AS k0,
    O.amount AS a0
  FROM (
    SELECT
      "uid",
      "dept"
    FROM (
      SELECT
        "uid",
        "dept",
        ROW_NUMBER() OVER (PARTITION BY "uid" ORDER BY __dpx_key) AS __dpx_rank
      FROM (
        SELECT
          *,
          RANDOM() AS __dpx_key
        FROM Employee
      ) AS __dpx_keyed
    ) AS __dpx_ranked
    WHERE
      __dpx_rank <= 100
  ) AS E
  JOIN (
    SELECT
      "uid",
      "amount"
    FROM (
      SELECT
        "uid",
        "amount",
        ROW_NUMBER() OVER (PARTITION BY "uid" ORDER BY __dpx_key) AS __dpx_rank
      FROM (
        SELECT
          *,
          RANDOM() AS __dpx_key
        FROM Orders
      ) AS __dpx_keyed
    ) AS __dpx_ranked
    WHERE
      __dpx_rank <= 100
  ) AS O
    ON E.uid = O.uid
  WHERE
    O.amount > 1
), per_user AS (
  SELECT
    k0,
    _uid,
    SUM(a0) AS p0,
    AVG(a0) AS p1
  FROM src
  WHERE
    NOT _uid IS NULL
  GROUP BY
    k0,
    _uid
), keyed AS (
  SELECT
    *,
    RANDOM() AS _r
  FROM per_user
), sampled AS (
  SELECT
    k0,
    _uid,
    p0,
    p1
  FROM (
    SELECT
      k0,
      _uid,
      p0,
      p1,
      ROW_NUMBER() OVER (PARTITION BY _uid ORDER BY _r) AS _w
    FROM keyed
  ) AS _t
  WHERE
    _w <= 2
), clamped AS (
  SELECT
    k0,
    _uid,
    CASE
      WHEN p0 IS NULL
      THEN NULL
      ELSE CAST(CASE
        WHEN ABS(
          (
            LEAST(GREATEST(CAST(p0 AS DOUBLE PRECISION), 0), 100)
          ) * 65536 - TRUNC((
            LEAST(GREATEST(CAST(p0 AS DOUBLE PRECISION), 0), 100)
          ) * 65536)
        ) >= 0.5
        THEN TRUNC((
          LEAST(GREATEST(CAST(p0 AS DOUBLE PRECISION), 0), 100)
        ) * 65536) + SIGN((
          LEAST(GREATEST(CAST(p0 AS DOUBLE PRECISION), 0), 100)
        ) * 65536)
        ELSE TRUNC((
          LEAST(GREATEST(CAST(p0 AS DOUBLE PRECISION), 0), 100)
        ) * 65536)
      END AS BIGINT)
    END AS c0,
    CASE
      WHEN p1 IS NULL
      THEN NULL
      ELSE CAST(CASE
        WHEN ABS(
          (
            LEAST(GREATEST(CAST(p1 AS DOUBLE PRECISION), 0), 100) - 50
          ) * 65536 - TRUNC((
            LEAST(GREATEST(CAST(p1 AS DOUBLE PRECISION), 0), 100) - 50
          ) * 65536)
        ) >= 0.5
        THEN TRUNC((
          LEAST(GREATEST(CAST(p1 AS DOUBLE PRECISION), 0), 100) - 50
        ) * 65536) + SIGN((
          LEAST(GREATEST(CAST(p1 AS DOUBLE PRECISION), 0), 100) - 50
        ) * 65536)
        ELSE TRUNC((
          LEAST(GREATEST(CAST(p1 AS DOUBLE PRECISION), 0), 100) - 50
        ) * 65536)
      END AS BIGINT)
    END AS c1
  FROM sampled
), cross_user AS (
  SELECT
    k0,
    COUNT(*) AS n_units,
    SUM(CAST(c0 AS DECIMAL(38, 0))) AS s0,
    COUNT(c1) AS n1,
    SUM(CAST(c1 AS DECIMAL(38, 0))) AS s1
  FROM clamped
  GROUP BY
    k0
)
SELECT
  *
FROM cross_user
