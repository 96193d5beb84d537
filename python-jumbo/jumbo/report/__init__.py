"""The adoption report: where a perfSONAR mesh stands against the WLCG jumbo-frame targets.

Library API:
    from jumbo.report import build_report
    report = build_report("sqlite:////var/lib/jumbo/jumbo.db", target=9000)

`queries_sqlite` / `queries_opensearch` answer the report's questions inside the store,
`model` turns the answers into the report dict, `render` / `html` format it, `cli` is the
`jumbo-report` command. This package runs on a coordinator's workstation (Python >= 3.8).
"""

from .errors import NoData, ReportError, StoreDown  # noqa: F401 - re-exported for callers of build_report


def build_report(store_url, **options):
    """The report dict for the store at `store_url` (options: see model.Options)."""
    from . import model
    from ..archive.queries import open_queries
    queries = open_queries(store_url)
    try:
        return model.build(queries, model.Options(**options))
    finally:
        queries.close()
