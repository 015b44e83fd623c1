"""One SparkSession for the whole test session (local[2], 4 shuffle partitions, UI off, ANSI
off — see core/sparkutil.py). Spark tests skip LOUDLY when PySpark or Java truly cannot be had."""

from __future__ import annotations

import sys

import pytest

from core.sparkutil import spark_session, spark_unavailable_reason


@pytest.fixture(scope="session")
def spark():
    reason = spark_unavailable_reason()
    if reason is not None:
        message = f"!!! SPARK TESTS SKIPPED: {reason} !!!"
        print(f"\n{message}", file=sys.stderr)
        pytest.skip(message)
    session = spark_session("local[2]", app_name="dpx-tests")
    yield session
    session.stop()
