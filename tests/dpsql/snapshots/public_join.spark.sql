WITH src AS (
  SELECT
    E.uid AS _uid,
    floor AS k0
  FROM Employee AS E
  LEFT JOIN Depts AS D
    ON E.dept = D.dept
), per_user AS (
  SELECT
    k0,
    _uid
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
    _uid
  FROM (
    SELECT
      k0,
      _uid,
      ROW_NUMBER() OVER (PARTITION BY _uid ORDER BY _r NULLS LAST) AS _w
    FROM keyed
  ) AS _t
  WHERE
    _w <= 2
), clamped AS (
  SELECT
    k0,
    _uid
  FROM sampled
), cross_user AS (
  SELECT
    k0,
    COUNT(*) AS n_units
  FROM clamped
  GROUP BY
    k0
)
SELECT
  *
FROM cross_user
