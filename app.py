"""DP Explorer — the Streamlit entry point. The shell (page list, role from `DPX_MODE`, noise
switch, session kept across reloads, connection-lost notice) is `ui.shell`."""

from ui.shell import run_app

run_app()
