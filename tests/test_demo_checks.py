"""demo.checks: a jumbo-throughput record of the real mesh against the lab's truth
(pair_measurement), on the demo mesh's own topology: the path MTU must be one of the ECMP
members', a gain is wanted wherever jumbo frames can carry TCP both ways, a path at 1500 must
have none, and a dest whose way back is smaller may leave the gain out (mss-capped)."""

import pytest

from demo import checks
from lab import real_mesh

TOPOLOGY = real_mesh.topology()


def _rec(path_mtu, gain, succeeded=True, error=None):
    return {"ip_version": 4, "succeeded": succeeded, "error": error, "path_mtu": path_mtu,
            "gain": gain}


def _failed(source, dest, rec):
    return [c.what for c in checks.pair_measurement(TOPOLOGY, source, dest, rec) if not c.ok]


@pytest.mark.parametrize("source, dest, rec", [
    ("cern", "nikhef", _rec(8950, 1.4)),        # the 8950 bottleneck both ways: a gain
    ("cern", "ral", _rec(9000, 1.2)),           # ECMP: either member's MTU
    ("cern", "ral", _rec(8950, 1.2)),
    ("desy", "cern", _rec(1500, None)),         # the 1500 site: skipped
    ("bnl", "cern", _rec(9000, None)),          # cern's way back to bnl is 1500: mss-capped
    ("bnl", "cern", _rec(9000, 1.3)),           # ... or not learnt yet: a gain
])
def test_what_the_truth_allows_passes(source, dest, rec):
    assert _failed(source, dest, rec) == []


@pytest.mark.parametrize("source, dest, rec, what", [
    ("cern", "nikhef", _rec(8950, None), "gain"),           # no gain where both ways carry it
    ("cern", "nikhef", _rec(9000, 1.4), "path-mtu"),        # the bottleneck missed
    ("cern", "ral", _rec(1500, None), "path-mtu"),
    ("desy", "cern", _rec(1500, 1.1), "skipped"),           # a gain on a 1500 path
    ("bnl", "cern", _rec(None, None, False, "stalled"), "bnl -> cern"),
])
def test_what_the_truth_forbids_fails(source, dest, rec, what):
    failed = _failed(source, dest, rec)
    assert len(failed) == 1 and failed[0].endswith(what), failed
