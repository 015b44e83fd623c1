"""Self-contained HTML reports of registered releases (for stakeholders; `dpx report`)."""

from core.reports.html import render_report, write_report

__all__ = ["render_report", "write_report"]
