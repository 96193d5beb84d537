"""The suite's results as typed objects, built once by the code that measures them and read
by attribute everywhere; JSON only at the doors (the plugin methods, the archive record):
`as_json()` / `from_json()` of each (members.Members). Each class declares its members once
(members.Field: key, schema, required, part); the result schemas of jumbo.core.schema are
written from those declarations (members.schema_of).

Public API:
    PmtuResult, Flow, Hop, Ptb, Blackhole, Reverse, fold_pmtud, PMTUD_ORDER   (pmtu)
    PairResult, Throughput, Leg, PATH_FIELDS, SUCCESS_VERDICTS                (pair)
    Members                                                                   (members)
"""

from .members import Members
from .pair import PATH_FIELDS, SUCCESS_VERDICTS, Leg, PairResult, Throughput
from .pmtu import PMTUD_ORDER, Blackhole, Flow, Hop, PmtuResult, Ptb, Reverse, fold_pmtud

__all__ = ["Members", "PATH_FIELDS", "SUCCESS_VERDICTS", "Leg", "PairResult", "Throughput",
           "PMTUD_ORDER", "Blackhole", "Flow", "Hop", "PmtuResult", "Ptb", "Reverse",
           "fold_pmtud"]
