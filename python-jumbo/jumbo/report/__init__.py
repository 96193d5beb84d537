"""The adoption report: where a perfSONAR mesh stands against the WLCG jumbo-frame targets.

Library API:
    from jumbo.report import build_report
    report = build_report("sqlite:////var/lib/jumbo/jumbo.db", target=9000)
    # raises jumbo.report.errors.ReportError (NoData, StoreDown) for what the user can fix

The archive's queries (jumbo.archive.queries) answer the report's questions inside the store,
`model` turns the answers into the report dict, `render` / `html` format it, `cli` is the
`jumbo-report` command. This package runs on a coordinator's workstation (Python >= 3.8).
"""

from . import model
# The module, not its names: this package loads whichever of the two is imported first.
from ..archive import queries as store_queries


def build_report(store_url, **options):
    """The report dict for the store at `store_url` (options: see model.Options)."""
    queries = store_queries.open_queries(store_url)
    try:
        return model.build(queries, model.Options(**options))
    finally:
        queries.close()
