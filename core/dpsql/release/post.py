"""Post-processing: select-list arithmetic, HAVING, ORDER BY and LIMIT over the released rows
only (spec §2.7). A function of the release, so it costs no privacy; it runs in a fresh locked
DuckDB connection holding nothing but the released table.
"""

from __future__ import annotations

import threading

import duckdb
import numpy as np
import pandas as pd
from sqlglot import exp

from core.dpsql.execute.engine import sandbox
from core.dpsql.limits import DEFAULT_LIMITS, ExecutionStopped, ResourceLimits
from core.dpsql.parse.ir import ROW_ID, DPQuery
from core.errors import InputError


def post_process_query(query: DPQuery, released: pd.DataFrame) -> tuple[pd.DataFrame, np.ndarray]:
    """The released rows after the query's post-processing, and the released row each output
    row came from (to carry its interval)."""
    items = [exp.alias_(o.expression.copy(), o.name, quoted=True) for o in query.outputs]
    sel = exp.select(*items, exp.column(ROW_ID, quoted=True)).from_("released")
    post = query.post
    if post.having is not None:
        sel = sel.where(post.having.copy())
    if post.order is not None:
        sel.set("order", post.order.copy())
    else:  # default: by the keys, so repeated runs list partitions in the same order
        sel = sel.order_by(
            *[f"k{i}" for i in range(len(query.keys))], exp.column(ROW_ID, quoted=True)
        )
    if post.limit is not None:
        sel.set("limit", post.limit.copy())
    out = post_process(released, sel.sql(dialect="duckdb"))
    order = out.pop(ROW_ID).to_numpy(dtype=int)
    return out, order


def post_process(
    released: pd.DataFrame, sql: str, timeout_s: float = DEFAULT_LIMITS.timeout_s
) -> pd.DataFrame:
    """Run post-processing SQL on the released rows only, in a fresh locked connection
    (one thread, the default memory limit, and the same watchdog as the engine)."""
    con = sandbox({"released": released}, ResourceLimits(threads=1))
    watchdog = threading.Timer(timeout_s, con.interrupt)
    watchdog.start()
    try:
        relation = con.sql(sql)
        out = relation.df()
        for i, kind in enumerate(relation.types):  # pandas turns DATE into a timestamp
            if str(kind) == "DATE":
                out[out.columns[i]] = [None if pd.isna(v) else v.date() for v in out.iloc[:, i]]
        return out
    except duckdb.InterruptException:
        raise ExecutionStopped(
            f"DPX-E003 post-processing was stopped after {timeout_s:g} s. Fix: simplify "
            "HAVING / ORDER BY."
        ) from None
    except duckdb.Error as err:
        raise InputError(
            f"DPX-E002 post-processing (HAVING/ORDER BY/LIMIT) failed: {str(err).splitlines()[0]}. "
            "Fix: correct the HAVING / ORDER BY expression (it runs on released values only)."
        ) from None
    finally:
        watchdog.cancel()
        con.close()
