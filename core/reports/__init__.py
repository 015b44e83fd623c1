"""Self-contained HTML reports of registered releases (for stakeholders; `dpx report`)."""

from core.reports.html import render_report, report_html, write_report

__all__ = ["render_report", "report_html", "write_report"]
