WITH src AS (
  SELECT
    E.uid AS _uid,
    dept AS k0
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
    p0
  FROM keyed
  QUALIFY
    ROW_NUMBER() OVER (PARTITION BY _uid ORDER BY _r) <= 2
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
