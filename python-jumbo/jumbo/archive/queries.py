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

import importlib

from .errors import ReportError
from .query_base import LATEST_FIELDS, STATES, Latest, Queries, Window, state_of
from .urls import check_url, plain_http_login_problem

# The reader of each kind of store, loaded by name once a URL names it: a report on SQLite
# never loads the HTTP and TLS stack, and one on OpenSearch not the SQLite store (the report's
# peak memory at 1M results rose by 9 MB when both were loaded up front). Neither reader
# imports this module: the table hides no circle.
READERS = {"sqlite": ("jumbo.archive.sqlite.reader", "SqliteQueries"),
           "opensearch": ("jumbo.archive.opensearch.reader", "OpenSearchQueries")}


def reader_class(kind):
    """The Queries class of a kind of store ("sqlite" or "opensearch")."""
    module, name = READERS[kind]
    return getattr(importlib.import_module(module), name)

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
    problem = plain_http_login_problem(parts.scheme, parts.hostname, bool(
        parts.username is not None or options.get("auth") or options.get("api_key")))
    if problem:
        raise ReportError(problem)
    if parts.scheme == "sqlite":
        return reader_class("sqlite")(url)
    # An OpenSearch archive may hold runs that came only through perfSONAR's http archiver
    # and Logstash (pscheduler_<type> streams): jumbo.archive.opensearch.streams decides.
    streams = importlib.import_module("jumbo.archive.opensearch.streams")
    return streams.report_queries(reader_class("opensearch")(url, **options))
