"""AppTest factory: scripts are resolved from the repository root, not the test file."""

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def app_test():
    """`app_test("pages/dp_sql.py")` -> an AppTest for that script (not yet run)."""

    def make(script: str, timeout: float = 60) -> AppTest:
        return AppTest.from_file(str(ROOT / script), default_timeout=timeout)

    return make
