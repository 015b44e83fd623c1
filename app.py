"""DP Explorer — the Streamlit entry point. The shell (page list, role from `DPX_MODE`, noise
switch, session kept across reloads, connection-lost notice) is `ui.shell`; stale private work
directories and expired uploads are removed once per server process (`ui.housekeeping`)."""

from ui.housekeeping import clean_at_start
from ui.shell import run_app

clean_at_start()
run_app()
