"""The library's one exception base: every error the library raises on purpose is a
JumboError, so a command (jumbo.protocol's mains, the report's and the archive's) can tell a
failure it explains to the operator from a defect. Errors that are also a ValueError (a bad
input) stay one, for callers that catch that.

Not under it, on purpose: the tool's slot signals (jumbo.tool.slot Deadline, Terminated,
StepOver) are BaseExceptions so that no `except Exception` in a phase swallows them."""


class JumboError(Exception):
    """An error of the suite, with a message for the operator."""
