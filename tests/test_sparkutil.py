"""core.sparkutil without a running Spark: the availability check and the master URL gate."""

from __future__ import annotations

import pytest

from core.errors import InputError
from core.sparkutil import check_master, java_major


@pytest.mark.parametrize(
    ("banner", "major"),
    [('openjdk version "17.0.15" 2025-04-15', 17), ('java version "1.8.0_292"', 8),
     ('openjdk version "21" 2023-09-19', 21), ("garbage", None)],
)  # fmt: skip
def test_java_major(tmp_path, banner, major):
    fake = tmp_path / "java"
    fake.write_text(f"#!/bin/sh\necho '{banner}' >&2\n")
    fake.chmod(0o755)
    assert java_major(str(fake)) == major


@pytest.mark.parametrize("url", ["local", "local[2]", "local[*]", "local[4, 2]", "yarn",
                                 "spark://host:7077", "k8s://https://h:6443"])  # fmt: skip
def test_master_urls_accepted(url):
    assert check_master(url) == url


@pytest.mark.parametrize("url", ["x", "local[0]", "locale", "http://h", "spark://", ""])
def test_master_urls_refused(url):
    with pytest.raises(InputError, match="not a Spark master URL"):
        check_master(url)
