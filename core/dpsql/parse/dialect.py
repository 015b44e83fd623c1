"""The DPSQL sqlglot dialect: DuckDB plus the DP clause, CLAMPED BETWEEN and `name => value` args.

sqlglot 30 cannot parse `SELECT WITH ANONYMIZATION ...`, `x CLAMPED BETWEEN a AND b` or
`SUM(x, contribution_bounds_per_group => (0, 1))`; three parser hooks add them (spec §1.4). The
parser gets its own copy of FUNCTIONS so the stock DuckDB dialect is left unchanged.
"""

from __future__ import annotations

import sqlglot
from sqlglot import exp
from sqlglot.dialects.duckdb import DuckDB
from sqlglot.errors import ParseError, TokenError
from sqlglot.tokens import TokenType

from core.errors import InputError

DP_KINDS = ("ANONYMIZATION", "DIFFERENTIAL_PRIVACY")
# ZetaSQL-form aggregates that take named arguments; sqlglot would otherwise reject the arity.
KWARG_FUNCTIONS = ("COUNT", "SUM", "AVG", "PERCENTILE_CONT", "VAR_POP", "STDDEV_POP")


class DPClause(exp.Expression):
    """`WITH ANONYMIZATION | DIFFERENTIAL_PRIVACY [OPTIONS (name = value, ...)]` after SELECT."""

    arg_types = {"kind": True, "expressions": False}


class Clamped(exp.Expression):
    """`expr CLAMPED BETWEEN low AND high` inside a paper-form aggregate call."""

    arg_types = {"this": True, "low": True, "high": True}


def _kwarg_aware(name: str, builder):
    def build(args, dialect=None):
        if any(isinstance(a, exp.Kwarg) for a in args):
            return exp.Anonymous(this=name, expressions=args)
        try:
            return builder(args)
        except TypeError:
            return builder(args, dialect=dialect)

    return build


class DPSQL(DuckDB):
    """DuckDB's dialect extended with the two DP query forms."""

    class Parser(DuckDB.Parser):
        FUNCTIONS = {
            **DuckDB.Parser.FUNCTIONS,
            **{
                name: _kwarg_aware(name, DuckDB.Parser.FUNCTIONS[name])
                for name in KWARG_FUNCTIONS
                if name in DuckDB.Parser.FUNCTIONS
            },
        }

        def _parse_hint(self):
            start = self._index
            if self._match(TokenType.WITH):
                kind = next((k for k in DP_KINDS if self._match_text_seq(k)), None)
                if kind is None:
                    self._retreat(start)
                    return super()._parse_hint()
                options = []
                if self._match_text_seq("OPTIONS"):
                    self._match_l_paren()
                    options = self._parse_csv(self._parse_assignment)
                    self._match_r_paren()
                return self.expression(DPClause(kind=kind, expressions=options))
            return super()._parse_hint()

        def _parse_lambda(self, alias: bool = False):
            this = super()._parse_lambda(alias=alias)
            if self._match_text_seq("CLAMPED", "BETWEEN"):
                low = self._parse_bitwise()
                self._match(TokenType.AND)
                high = self._parse_bitwise()
                return self.expression(Clamped(this=this, low=low, high=high))
            return this

    class Generator(DuckDB.Generator):
        TRANSFORMS = {
            **DuckDB.Generator.TRANSFORMS,
            DPClause: lambda self, e: (
                f" WITH {e.args['kind']}"
                + (f" OPTIONS ({self.expressions(e, flat=True)})" if e.expressions else "")
            ),
            Clamped: lambda self, e: (
                f"{self.sql(e, 'this')} CLAMPED BETWEEN {self.sql(e, 'low')} AND {self.sql(e, 'high')}"
            ),
        }


_HINTS = {
    "CLAMPED": "CLAMPED BETWEEN goes inside the function's parentheses, e.g. "
    "ANON_AVG(x CLAMPED BETWEEN 0 AND 100).",
    "=>": "named arguments are written inside the call, e.g. "
    "SUM(x, contribution_bounds_per_group => (0, 100)).",
}


def parse_statements(sql: str) -> list[exp.Expression]:
    """Parse `sql` with the DPSQL dialect; a syntax error becomes DPX-P001 with line and column."""
    if not sql or not sql.strip():
        raise InputError("DPX-P001 empty query. Fix: write a SELECT WITH ANONYMIZATION query.")
    try:
        return [e for e in sqlglot.parse(sql, read=DPSQL) if e is not None]
    except ParseError as err:
        raise InputError(_parse_message(sql, err)) from None
    except TokenError as err:
        raise InputError(
            f"DPX-P001 syntax error: {err}. Fix: check quotes and brackets are closed."
        ) from None


def _parse_message(sql: str, err: ParseError) -> str:
    info = err.errors[0] if err.errors else {}
    line, col = info.get("line"), info.get("col")
    token = info.get("highlight") or ""
    desc = info.get("description") or str(err).splitlines()[0]
    text_line = sql.splitlines()[line - 1] if line and 0 < line <= len(sql.splitlines()) else ""
    caret = " " * max(0, (col or 1) - len(token)) + "^" if text_line else ""
    hint = next((h for key, h in _HINTS.items() if key in sql.upper()), None)
    fix = hint or "check the SQL near the marked token (see the DP SQL grammar in the docs)."
    where = f"line {line}, column {col}" if line else "unknown position"
    return (
        f"DPX-P001 syntax error at {where}, near '{token}': {desc}.\n{text_line}\n{caret}\n"
        f"Fix: {fix}"
    )


def to_sql(node: exp.Expression, dialect: str = "duckdb") -> str:
    """Generate SQL for `node`; DP nodes need the DPSQL dialect."""
    return node.sql(dialect=DPSQL if dialect == "dpsql" else dialect)
