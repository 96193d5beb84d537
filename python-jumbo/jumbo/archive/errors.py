"""The errors the archive raises: a failed write (StoreError, transient or permanent) and a
read the report cannot do (ReportError, StoreDown). jumbo.report.errors takes ReportError and
StoreDown from here (the report's reads go through the archive's readers)."""

from ..core.errors import JumboError


class StoreError(JumboError):
    """A failed write. `transient` says whether trying again later can succeed."""

    def __init__(self, message, transient=False):
        Exception.__init__(self, message)
        self.message = message
        self.transient = transient

    def __str__(self):
        return self.message


class TransientError(StoreError):
    def __init__(self, message):
        StoreError.__init__(self, message, transient=True)


class PermanentError(StoreError):
    def __init__(self, message):
        StoreError.__init__(self, message, transient=False)


class ReportError(JumboError):
    """A clean, user-facing failure: the CLI prints the message and exits non-zero."""

    def __init__(self, message, status=2):
        super().__init__(message)
        self.status = status


class StoreDown(ReportError):
    def __init__(self, message):
        super().__init__(message, status=3)


class TooManyBuckets(StoreDown):
    """An aggregation asked for more buckets than the archive's search.max_buckets allows
    (an archive set below OpenSearch's default): the reader can ask in smaller pages."""
