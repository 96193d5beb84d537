"""The one exception the report raises for anything the user can fix."""


class ReportError(Exception):
    """A clean, user-facing failure: the CLI prints the message and exits non-zero."""

    def __init__(self, message, status=2):
        super().__init__(message)
        self.status = status


class StoreDown(ReportError):
    def __init__(self, message):
        super().__init__(message, status=3)


class NoData(ReportError):
    def __init__(self, message):
        super().__init__(message, status=4)
