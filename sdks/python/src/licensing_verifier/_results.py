"""What every verifier answers: a verdict with its error codes."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Issue:
    """One reason a document is not valid. A result, not an exception."""

    #: A stable code, the same in every SDK: `malformed`, `signature_invalid`, `expired`, ...
    code: str
    #: A sentence for people.
    message: str
