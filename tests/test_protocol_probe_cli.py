"""`jumbocheck` (the command an operator runs on a node) and `pscheduler task pmtu` (the
test's result-format) say the same words for the same measurement: both print
jumbo.testtype.render.verdict's line first."""

import pytest

from jumbo.core.result import PmtuResult
from jumbo.testtype import render
from jumbo.protocol import probe_cli as jumbocheck

# Engine answers of the shapes the lab produces (clean jumbo, a 1500 core with working
# PMTUD, a black hole at hop 2).
RESULTS = [
    {"schema": 1, "succeeded": True, "path-mtu": 9000, "local-mtu": 9000, "target-mtu": 9000,
     "jumbo": True, "pmtud": "not-needed", "blackhole": None, "dest-ip": "198.18.1.2",
     "ip-version": 4, "method": "udp", "probes": 7, "elapsed": 0.05, "flows": [], "hops": [],
     "ptb": []},
    {"schema": 1, "succeeded": True, "path-mtu": 1500, "local-mtu": 9000, "target-mtu": 9000,
     "jumbo": False, "pmtud": "ok", "blackhole": None, "dest-ip": "198.18.1.2",
     "ip-version": 4, "method": "udp", "probes": 9, "elapsed": 0.08, "flows": [], "hops": [],
     "ptb": [{"from": "198.18.0.2", "mtu": 1500, "size": 9000, "useful": True, "count": 1}]},
    {"schema": 1, "succeeded": True, "path-mtu": 1500, "local-mtu": 9000, "target-mtu": 9000,
     "jumbo": False, "pmtud": "blackhole",
     "blackhole": {"ttl": 2, "ip": "198.18.0.2", "size": 9000}, "dest-ip": "198.18.1.2",
     "ip-version": 4, "method": "udp", "probes": 21, "elapsed": 1.2, "flows": [], "hops": [],
     "ptb": []},
    # The run stopped with 5 of its 8 flows unconfirmed (the UDP budget): not jumbo.
    {"schema": 1, "succeeded": True, "path-mtu": 9000, "local-mtu": 9000, "target-mtu": 9000,
     "jumbo": True, "pmtud": "unknown", "blackhole": None, "dest-ip": "198.18.1.2",
     "ip-version": 4, "method": "udp", "probes": 40, "elapsed": 13.7, "hops": [], "ptb": [],
     "flows": [{"flow": n, "path-mtu": 9000 if n < 3 else None,
                "pmtud": "not-needed" if n < 3 else "unknown"} for n in range(8)]},
]


@pytest.mark.parametrize("result", RESULTS)
def test_jumbocheck_and_result_format_share_the_verdict_line(result):
    assert jumbocheck.text(result).splitlines()[0] == render.verdict(result)


@pytest.mark.parametrize("result", RESULTS)
def test_the_typed_result_reads_as_its_json(result):
    typed = PmtuResult.from_json(result)
    assert jumbocheck.text(typed) == jumbocheck.text(result)
    assert len(jumbocheck.text(typed).splitlines()) > 2


@pytest.mark.parametrize("result,line", list(zip(RESULTS, [
    "Path MTU 9000: jumbo end to end, PMTUD not needed",
    "Path MTU 1500 < 9000: not jumbo, PMTUD works (too-big from 198.18.0.2)",
    "Path MTU 1500 < 9000: black hole between hop 2 (198.18.0.2) and hop 3, 1501-9000 byte "
    "packets vanish",
    "Path MTU not decided: 3 of 8 flows carried 9000, 5 not measured (run cut short); "
    "PMTUD unknown",
])))
def test_the_verdict_line(result, line):
    assert render.verdict(result) == line


def test_flows_not_measured_are_said_on_the_verdict_line():
    """A single-ended run whose dest's ICMP budget left no time for some flows says how many
    were not measured: they cleared nothing, and the line must not let them look measured."""
    result = dict(RESULTS[0], flows=[{"flow": i, "path-mtu": 9000, "pmtud": "not-needed"}
                                     for i in range(3)], **{"flows-not-measured": 5})
    assert render.verdict(result) == ("Path MTU 9000: jumbo end to end, PMTUD not needed; "
                                      "5 of 8 flows not measured (the dest's ICMP rate limit)")
