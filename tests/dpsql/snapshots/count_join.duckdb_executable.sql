WITH src AS (
  SELECT
    E.uid AS _uid,
    dept AS k0
  FROM Employee AS E
  JOIN Orders AS O
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
      p0
    FROM counted
    WHERE
      _n <= 2
    UNION ALL
    SELECT
      keyed.k0,
      keyed._uid,
      keyed.p0
    FROM keyed
    SEMI JOIN chosen
      ON keyed._uid = chosen._uid AND keyed.k0 IS NOT DISTINCT FROM chosen.k0
  ) AS _s
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
    SUM(c0) AS s0
  FROM clamped
  GROUP BY
    k0
)
SELECT
  *
FROM cross_user
