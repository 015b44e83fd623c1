"""Errors whose message is meant for the person using the app or the CLI.

Anything raised as `InputError` is shown verbatim (CLI: one line on stderr, exit 2;
page: `st.error`). The message must say what was wrong and how to fix it.
"""


class InputError(ValueError):
    """Bad input from the user: a file, a column, a parameter, a query."""


class BudgetExceededError(InputError):
    """A privacy spend that would exceed the ledger's total; nothing was released."""
