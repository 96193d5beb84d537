"""What the report asks a store, whichever store it is.

Each store module (`queries_sqlite`, `queries_opensearch`) answers the same small set of
questions, and answers them *in the store*: the latest result per directed path (SQL window
function / the latest-per-path index), trend buckets (GROUP BY over the store's per-day
summary, or by day over a window / date_histogram), state changes (the paths seen in several
states, from the per-path summary or a pass over the window / a composite aggregation; then
LAG or a sorted read over those paths' histories only), gains and latency (per-path
aggregates). Only per-path or per-bucket answers ever reach Python, never the result history
itself.
"""

from .errors import ReportError
from .opensearch.reader import OpenSearchQueries
from .query_base import LATEST_FIELDS, STATES, Latest, Queries, Window, state_of
from .sqlite.reader import SqliteQueries
from .urls import check_url

__all__ = ["LATEST_FIELDS", "STATES", "Latest", "Queries", "Window", "open_queries", "state_of"]


def open_queries(url, **options):
    """The report's queries over the store named by `url` (sqlite:///PATH or
    http(s)://HOST:PORT), checked as the stores check it (jumbo.archive.check_url).
    `options` (OpenSearch only) are the archiver store's: auth, api_key, verify_ssl, ca_file."""
    if not url:
        raise ReportError("no store given: use --store sqlite:///PATH or --store http://HOST:PORT")
    try:
        parts = check_url(url)
    except ValueError as err:
        raise ReportError(str(err))
    if parts.scheme == "sqlite":
        return SqliteQueries(url)
    return OpenSearchQueries(url, **options)
