"""DP Explorer core: the algorithms behind the app and the `dpx` CLI (no UI code here)."""

__version__ = "0.1.0"
