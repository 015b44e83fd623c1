WITH src AS (
  SELECT
    Orders.uid AS _uid,
    amount AS a0
  FROM Orders
), rows_keyed AS (
  SELECT
    *,
    MD5_NUMBER(
      CASE
        WHEN _uid IS NULL
        THEN 'N'
        ELSE CAST(LENGTH(CAST(_uid AS TEXT)) AS TEXT) || ':' || CAST(_uid AS TEXT)
      END || '|' || CASE
        WHEN a0 IS NULL
        THEN 'N'
        ELSE CAST(LENGTH(CAST(a0 AS TEXT)) AS TEXT) || ':' || CAST(a0 AS TEXT)
      END || '|' || '2937467307694268568'
    ) AS _rr
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
        LEAST(GREATEST(TRY_CAST(a0 AS DOUBLE), 0), 10) - 5
      ) * 262144) AS BIGINT)
    ) FILTER(WHERE
      rn_a0 <= 5 AND NOT a0 IS NULL) AS p0s,
    SUM(
      CAST(ROUND(
        (
          LEAST(GREATEST(TRY_CAST(a0 AS DOUBLE), 0), 10) * LEAST(GREATEST(TRY_CAST(a0 AS DOUBLE), 0), 10) - 50
        ) * 16384
      ) AS BIGINT)
    ) FILTER(WHERE
      rn_a0 <= 5 AND NOT a0 IS NULL) AS p0q,
    LIST(LEAST(GREATEST(TRY_CAST(a0 AS DOUBLE), 0), 10)) FILTER(WHERE
      rn_a0 <= 5 AND NOT a0 IS NULL) AS p1
  FROM rows_ranked
  WHERE
    NOT _uid IS NULL
  GROUP BY
    _uid
), unit_keyed AS (
  SELECT
    _uid,
    p0n,
    p0s,
    p0q,
    p1,
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
                    per_user._uid,
                    per_user.p0n,
                    per_user.p0s,
                    per_user.p0q,
                    per_user.p1
                  FROM per_user
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
    _uid,
    p0n,
    p0s,
    p0q,
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
                  XOR(XOR(_x, 0), (
                    XOR(_x, 0) >> 16
                  ))
                ) * 73244475
              ) & 4294967295
            ) AS _ka_1,
            (
              (
                (
                  XOR(XOR(XOR(_x, 3290990502), 0), (
                    XOR(XOR(_x, 3290990502), 0) >> 16
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
