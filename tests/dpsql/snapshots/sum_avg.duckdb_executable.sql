WITH src AS (
  SELECT
    E.uid AS _uid,
    dept AS k0,
    O.amount AS a0
  FROM Employee AS E
  JOIN Orders AS O
    ON E.uid = O.uid
  WHERE
    O.amount > 1
), per_user AS (
  SELECT
    k0,
    _uid,
    SUM(TRY_CAST(a0 AS DOUBLE)) AS p0,
    AVG(TRY_CAST(a0 AS DOUBLE)) AS p1
  FROM src
  WHERE
    NOT _uid IS NULL
  GROUP BY
    k0,
    _uid
), unit_sizes AS (
  SELECT
    _uid,
    COUNT(*) AS _n
  FROM per_user
  GROUP BY
    _uid
), counted AS (
  SELECT
    per_user.*,
    unit_sizes._n
  FROM per_user
  JOIN unit_sizes
    ON per_user._uid = unit_sizes._uid
), keyed AS (
  SELECT
    *,
    MD5(
      CASE
        WHEN _uid IS NULL
        THEN 'N'
        ELSE CAST(LENGTH(CAST(_uid AS TEXT)) AS TEXT) || ':' || CAST(_uid AS TEXT)
      END || '|' || CASE
        WHEN k0 IS NULL
        THEN 'N'
        ELSE CAST(LENGTH(CAST(k0 AS TEXT)) AS TEXT) || ':' || CAST(k0 AS TEXT)
      END || '|' || '2937467307694268567'
    ) AS _r
  FROM counted
  WHERE
    _n > 2
), chosen AS (
  SELECT
    _uid,
    k0
  FROM keyed
  QUALIFY
    ROW_NUMBER() OVER (PARTITION BY _uid ORDER BY _r) <= 2
), sampled AS (
  SELECT
    *
  FROM (
    SELECT
      k0,
      _uid,
      p0,
      p1
    FROM counted
    WHERE
      _n <= 2
    UNION ALL
    SELECT
      keyed.k0,
      keyed._uid,
      keyed.p0,
      keyed.p1
    FROM keyed
    SEMI JOIN chosen
      ON keyed._uid = chosen._uid AND keyed.k0 IS NOT DISTINCT FROM chosen.k0
  ) AS _s
), clamped AS (
  SELECT
    k0,
    _uid,
    CASE
      WHEN p0 IS NULL
      THEN NULL
      ELSE CAST(ROUND((
        LEAST(GREATEST(CAST(p0 AS DOUBLE), 0), 100)
      ) * 65536) AS BIGINT)
    END AS c0,
    CASE
      WHEN p1 IS NULL
      THEN NULL
      ELSE CAST(ROUND((
        LEAST(GREATEST(CAST(p1 AS DOUBLE), 0), 100) - 50
      ) * 65536) AS BIGINT)
    END AS c1
  FROM sampled
), cross_user AS (
  SELECT
    k0,
    COUNT(*) AS n_units,
    SUM(c0) AS s0,
    COUNT(c1) AS n1,
    SUM(c1) AS s1
  FROM clamped
  GROUP BY
    k0
)
SELECT
  *
FROM cross_user
