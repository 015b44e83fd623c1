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
        __dpx_t."uid",
        __dpx_t."dept"
      FROM Employee AS __dpx_t
      ANTI JOIN (
        SELECT
          "uid"
        FROM Employee
        GROUP BY
          "uid"
        HAVING
          COUNT(*) > 100
      ) AS __dpx_heavy
        ON __dpx_t."uid" = __dpx_heavy."uid"
      UNION ALL
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
            MD5_NUMBER(
              TRY(
                CASE
                  WHEN "uid" IS NULL
                  THEN 'N'
                  ELSE TRY_CAST(LENGTH(CAST("uid" AS TEXT)) AS TEXT) || ':' || TRY_CAST("uid" AS TEXT)
                END || '|' || CASE
                  WHEN "dept" IS NULL
                  THEN 'N'
                  ELSE TRY_CAST(LENGTH(CAST("dept" AS TEXT)) AS TEXT) || ':' || TRY_CAST("dept" AS TEXT)
                END || '|' || '2937467307694268569'
              )
            ) AS __dpx_key
          FROM (
            SELECT
              __dpx_t."uid",
              __dpx_t."dept"
            FROM Employee AS __dpx_t
            SEMI JOIN (
              SELECT
                "uid"
              FROM Employee
              GROUP BY
                "uid"
              HAVING
                COUNT(*) > 100
            ) AS __dpx_heavy
              ON __dpx_t."uid" = __dpx_heavy."uid"
          ) AS __dpx_heavy_rows
        ) AS __dpx_keyed
      ) AS __dpx_ranked
      WHERE
        __dpx_rank <= 100
    ) AS __dpx_capped
  ) AS E
  JOIN (
    SELECT
      "uid",
      "amount"
    FROM (
      SELECT
        __dpx_t."uid",
        __dpx_t."amount"
      FROM Orders AS __dpx_t
      ANTI JOIN (
        SELECT
          "uid"
        FROM Orders
        GROUP BY
          "uid"
        HAVING
          COUNT(*) > 100
      ) AS __dpx_heavy
        ON __dpx_t."uid" = __dpx_heavy."uid"
      UNION ALL
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
            MD5_NUMBER(
              TRY(
                CASE
                  WHEN "uid" IS NULL
                  THEN 'N'
                  ELSE TRY_CAST(LENGTH(CAST("uid" AS TEXT)) AS TEXT) || ':' || TRY_CAST("uid" AS TEXT)
                END || '|' || CASE
                  WHEN "amount" IS NULL
                  THEN 'N'
                  ELSE TRY_CAST(LENGTH(CAST("amount" AS TEXT)) AS TEXT) || ':' || TRY_CAST("amount" AS TEXT)
                END || '|' || '2937467307694268569'
              )
            ) AS __dpx_key
          FROM (
            SELECT
              __dpx_t."uid",
              __dpx_t."amount"
            FROM Orders AS __dpx_t
            SEMI JOIN (
              SELECT
                "uid"
              FROM Orders
              GROUP BY
                "uid"
              HAVING
                COUNT(*) > 100
            ) AS __dpx_heavy
              ON __dpx_t."uid" = __dpx_heavy."uid"
          ) AS __dpx_heavy_rows
        ) AS __dpx_keyed
      ) AS __dpx_ranked
      WHERE
        __dpx_rank <= 100
    ) AS __dpx_capped
  ) AS O
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
), keyed AS (
  SELECT
    *,
    MD5_NUMBER(
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
  FROM per_user
), sampled AS (
  SELECT
    k0,
    _uid,
    p0,
    p1
  FROM keyed
  QUALIFY
    ROW_NUMBER() OVER (PARTITION BY _uid ORDER BY _r) <= 2
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
