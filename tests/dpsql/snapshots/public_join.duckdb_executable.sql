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
    _uid
  FROM keyed
  QUALIFY
    ROW_NUMBER() OVER (PARTITION BY _uid ORDER BY _r) <= 2
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
