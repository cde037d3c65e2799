"""The exception and warning classes of rgate (the native module builds them)."""

from __future__ import annotations


class RgateError(ValueError):
    """An input rgate refuses, or a run it cannot finish: the command line's
    error, with the same message and ``hint`` (what to do next).

    ``str(err)`` reads as the command line prints it, less the ``error:``
    prefix::

        >>> import rgate
        >>> try:
        ...     rgate.evaluate({"q 1": {"d": 1}}, {"q 1": ["d"]})
        ... except rgate.RgateError as err:
        ...     print(err.message)
        ...     print(err.hint)
        qrels dict: query id `q 1` contains white space
        TREC runs split on white space, so ids cannot contain it
    """

    def __init__(self, message: str, hint: "str | None" = None) -> None:
        super().__init__(message if hint is None else f"{message}\nhint: {hint}")
        self.message = message
        self.hint = hint

    def __reduce__(self) -> "tuple[type[RgateError], tuple[str, str | None]]":  # pickles with its two fields, as raised
        return (type(self), (self.message, self.hint))


class RgateWarning(UserWarning):
    """What the command line prints as ``warning: ...`` (queries absent
    from a run, labels that can never be hit, ...), raised through Python's
    :mod:`warnings` module instead: filter, record or turn it into an error
    as any warning."""
