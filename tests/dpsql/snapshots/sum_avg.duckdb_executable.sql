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
  GROUP BY
    k0,
    _uid
  HAVING
    COUNT(_uid) > 0
), part_keys AS (
  SELECT
    k0,
    CAST('0x' || SUBSTRING(
      MD5(
        CASE
          WHEN k0 IS NULL
          THEN 'N'
          ELSE CAST(LENGTH(CAST(k0 AS TEXT)) AS TEXT) || ':' || CAST(k0 AS TEXT)
        END || '|' || '2937467307694268567'
      ),
      1,
      8
    ) AS BIGINT) AS _pa,
    CAST('0x' || SUBSTRING(
      MD5(
        CASE
          WHEN k0 IS NULL
          THEN 'N'
          ELSE CAST(LENGTH(CAST(k0 AS TEXT)) AS TEXT) || ':' || CAST(k0 AS TEXT)
        END || '|' || '2937467307694268567'
      ),
      9,
      8
    ) AS BIGINT) AS _pb
  FROM per_user
  GROUP BY
    k0
), unit_keyed AS (
  SELECT
    k0,
    _uid,
    p0,
    p1,
    _pa,
    _pb,
    _x
  FROM (
    SELECT
      *,
      (
        XOR(_x_2, (
          _x_2 >> 16
        ))
      ) AS _x
    FROM (
      SELECT
        *,
        (
          (
            (
              XOR(_x_1, (
                _x_1 >> 16
              ))
            ) * 73244475
          ) & 4294967295
        ) AS _x_2
      FROM (
        SELECT
          *,
          (
            (
              (
                XOR(XOR(XOR(_xu, _uhi), 1405077885), (
                  XOR(XOR(_xu, _uhi), 1405077885) >> 16
                ))
              ) * 73244475
            ) & 4294967295
          ) AS _x_1
        FROM (
          SELECT
            *,
            (
              XOR(_xu_2, (
                _xu_2 >> 16
              ))
            ) AS _xu
          FROM (
            SELECT
              *,
              (
                (
                  (
                    XOR(_xu_1, (
                      _xu_1 >> 16
                    ))
                  ) * 73244475
                ) & 4294967295
              ) AS _xu_2
            FROM (
              SELECT
                *,
                (
                  (
                    (
                      XOR(XOR(_ulo, 2356767552), (
                        XOR(_ulo, 2356767552) >> 16
                      ))
                    ) * 73244475
                  ) & 4294967295
                ) AS _xu_1
              FROM (
                SELECT
                  *,
                  (
                    (
                      _uid
                    ) & 4294967295
                  ) AS _ulo,
                  (
                    (
                      (
                        _uid >> 32
                      )
                    ) & 4294967295
                  ) AS _uhi
                FROM (
                  SELECT
                    per_user.k0,
                    per_user._uid,
                    per_user.p0,
                    per_user.p1,
                    pk._pa,
                    pk._pb
                  FROM per_user
                  INNER JOIN part_keys AS pk
                    ON per_user.k0 IS NOT DISTINCT FROM pk.k0
                ) AS _l0
              ) AS _l1
            ) AS _l2
          ) AS _l3
        ) AS _l4
      ) AS _l5
    ) AS _l6
  ) AS _l
), keyed AS (
  SELECT
    k0,
    _uid,
    p0,
    p1,
    _r
  FROM (
    SELECT
      *,
      (
        (
          _ka << 31
        ) | (
          _kb >> 1
        )
      ) AS _r
    FROM (
      SELECT
        *,
        (
          XOR(_ka_2, (
            _ka_2 >> 16
          ))
        ) AS _ka,
        (
          XOR(_kb_2, (
            _kb_2 >> 16
          ))
        ) AS _kb
      FROM (
        SELECT
          *,
          (
            (
              (
                XOR(_ka_1, (
                  _ka_1 >> 16
                ))
              ) * 73244475
            ) & 4294967295
          ) AS _ka_2,
          (
            (
              (
                XOR(_kb_1, (
                  _kb_1 >> 16
                ))
              ) * 73244475
            ) & 4294967295
          ) AS _kb_2
        FROM (
          SELECT
            *,
            (
              (
                (
                  XOR(XOR(_x, _pa), (
                    XOR(_x, _pa) >> 16
                  ))
                ) * 73244475
              ) & 4294967295
            ) AS _ka_1,
            (
              (
                (
                  XOR(XOR(XOR(_x, 3290990502), _pb), (
                    XOR(XOR(_x, 3290990502), _pb) >> 16
                  ))
                ) * 73244475
              ) & 4294967295
            ) AS _kb_1
          FROM (
            SELECT
              *
            FROM unit_keyed
          ) AS _l0
        ) AS _l1
      ) AS _l2
    ) AS _l3
  ) AS _l
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
