"""Apache Spark availability and the one SparkSession the process uses (optional extra).

`pip install -e '.[spark]'` brings PySpark; Java 17 comes from Debian's openjdk-17-jre-headless.
`core` imports PySpark only inside these functions, so the package works without it.

ANSI mode is switched OFF deliberately: with ANSI on, a cast of a bad value, a division by zero
or an overflow raises an error whose occurrence depends on private values (a released bit).
Off, they yield NULL like DuckDB's TRY/TRY_CAST in the executed SQL, so every accepted query
runs to completion. (Integer overflow wraps instead of giving NULL; the generated sums are
bounded far below 2^63, so that only concerns user arithmetic inside the FROM/WHERE.)
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import warnings
from functools import lru_cache
from pathlib import Path

from core.errors import InputError

SESSION_CONF = {
    "spark.sql.ansi.enabled": "false",
    "spark.sql.shuffle.partitions": "4",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.driver.bindAddress": "127.0.0.1",
    "spark.driver.host": "127.0.0.1",
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.driver.extraJavaOptions": "-Dlog4j2.configurationFile="
    + (Path(__file__).with_name("spark_log4j2.properties")).as_uri(),
}


@lru_cache(maxsize=1)
def spark_unavailable_reason() -> str | None:
    """None when PySpark imports and a Java runtime is found; otherwise why not."""
    try:
        import pyspark  # noqa: F401
    except ImportError:
        return "PySpark is not installed (pip install -e '.[spark]')"
    java_home = os.environ.get("JAVA_HOME")
    java = os.path.join(java_home, "bin", "java") if java_home else shutil.which("java")
    if not (java and os.path.exists(java)):
        return "no Java runtime found (apt-get install openjdk-17-jre-headless)"
    major = java_major(java)
    if major is None or major < 17:
        return f"{java} is not Java 17 or later (apt-get install openjdk-17-jre-headless)"
    return None


def java_major(java: str) -> int | None:
    """The major version `java -version` reports (8 for "1.8.0_x", 17 for "17.0.15")."""
    try:
        text = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=60).stderr
    except (OSError, subprocess.SubprocessError):
        return None
    found = re.search(r'version "(\d+)(?:\.(\d+))?', text)
    if not found:
        return None
    first = int(found.group(1))
    return int(found.group(2) or 0) if first == 1 else first


def require_spark() -> None:
    reason = spark_unavailable_reason()
    if reason is not None:
        raise InputError(
            f"the Spark engine is not available: {reason}. Fix: install it (make spark), or "
            "leave out --engine spark."
        )


MASTER_PATTERN = re.compile(
    r"local(\[(\*|[1-9][0-9]*)(,\s*[1-9][0-9]*)?\])?|yarn|(spark|k8s|mesos)://\S+"
)


def check_master(master: str) -> str:
    """`master` if it is a Spark master URL (local[N], spark://, k8s://, yarn); refused early,
    because spark-submit dumps a Java stack trace for a malformed one."""
    if not MASTER_PATTERN.fullmatch(master):
        raise InputError(
            f"--spark-master {master!r} is not a Spark master URL. Fix: use local[2], local[*], "
            "spark://HOST:7077, k8s://https://HOST:PORT or yarn."
        )
    return master


def spark_session(master: str | None = None, app_name: str = "dpx"):
    """The process's SparkSession (created once; `master` defaults to local[2])."""
    require_spark()
    master = check_master(master or "local[2]")
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")  # no hostname warnings in local mode
    warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas")
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.appName(app_name).master(master)
    for key, value in SESSION_CONF.items():
        builder = builder.config(key, value)
    # Spark creates its (unused) warehouse directory in the working directory by default
    warehouse = Path(tempfile.gettempdir()) / f"dpx-spark-warehouse-{os.getuid()}"
    builder = builder.config("spark.sql.warehouse.dir", warehouse.as_uri())
    try:
        session = builder.getOrCreate()
        session.sparkContext.setLogLevel("OFF")
        _quiet_python_loggers()
    except Exception as err:  # noqa: BLE001 - Java gateway, unreachable master: one clear line
        raise InputError(
            f"could not start Spark (master {master}): {_first_line(err)}. Fix: check "
            "--spark-master (e.g. local[2] or spark://host:7077) and that Java 17 runs "
            "(java -version)."
        ) from None
    return session


def _quiet_python_loggers() -> None:
    """PySpark 4 logs every analysis/runtime error with its full message and JVM stack to
    stderr; those messages can quote data values and are not the one-line errors dpx gives.
    (The JVM side is switched OFF by setLogLevel above.)"""
    try:
        from pyspark.logger import PySparkLogger
    except ImportError:  # PySpark 3.5 has no such loggers
        return
    for name in ("SQLQueryContextLogger", "DataFrameQueryContextLogger"):
        PySparkLogger.getLogger(name).disabled = True


def spark_failure(what: str, err: Exception) -> InputError:
    """One line for a Spark failure in an owner-side data pass (htf, balance): which step
    failed and Spark's first message line (these passes run for the data owner and release
    nothing; DP SQL withholds Spark's message instead, see core.dpsql.execute.spark_engine)."""
    return InputError(
        f"Spark could not {what}: {_first_line(err)}. Fix: check the file and its columns."
    )


def _first_line(err: Exception) -> str:
    return (str(err).strip().splitlines() or [type(err).__name__])[0][:200].rstrip(". ")
