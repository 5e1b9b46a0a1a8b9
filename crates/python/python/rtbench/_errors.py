"""The exception classes the engine's errors are raised as, beyond Python's built-in ones.

`error` is the `regex` module's error class (raised by the reference for a pattern it cannot
compile) when `regex` is importable, and a class of the same name otherwise. `RtbenchError` is
rtbench's own: a pattern that backtracks catastrophically on the text, where the reference
would hang or run out of memory. `Unsupported` never reaches users: it tells the Python layer
that an argument holds a Python object the engine does not model, so the call goes to the
reference implementation instead.
"""

try:
    from regex import error
except ImportError:  # pragma: no cover - regex is a dependency of transformers

    class error(Exception):  # noqa: N801 - the reference's class is named `error`
        """A regular expression the `regex` module cannot compile."""


class RtbenchError(RuntimeError):
    """rtbench stopped a parse the reference would never finish (a delimiter pattern that
    backtracks catastrophically on this text)."""


class Unsupported(Exception):
    """An argument holds a Python object rtbench's engine does not model."""


__all__ = ["RtbenchError", "Unsupported", "error"]
