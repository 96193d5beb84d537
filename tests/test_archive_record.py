"""Issue 23 R1: `pscheduler task pmtu --dest fd00:201::2` (no --source) on a real pScheduler
5.2.5 was archived with source 198.18.200.1 (the lead's IPv4 name) and source_ip NULL. The
run now says which address it measured from (result `source-ip`) and the record takes the
source in the family measured."""

import copy

from fixtures import samples
from jumbo.archive import record as records
from jumbo.archive.stores import open_store
from jumbo.core import resolve, validate
from jumbo.core.spec import RunSpec
from jumbo.probe import PathResult
from jumbo.tool import pair_result
from jumbo.tool import result as results

# The shape pScheduler 5.2.5 archives for that task (lab/real_pscheduler: lead rps-a
# 198.18.200.1 / fd00:200::1, dest rps-b fd00:201::2): participants named by the lead's
# PSCHEDULER_LOCALHOST (IPv4), the spec without source, the tool's result.
FORWARD = {"schema": 1, "succeeded": True, "path-mtu": 8950, "local-mtu": 9000,
           "target-mtu": 9000, "jumbo": False, "pmtud": "ok", "blackhole": None,
           "method": "udp", "ip-version": 6, "dest-ip": "fd00:201::2",
           "source-ip": "fd00:200::1", "hops": [], "flows": [], "probes": 12,
           "elapsed": 1.5, "ptb": []}


def _assemble(spec, forward):
    """The tool's pmtu result (JSON) for a spec and a forward answer (JSON)."""
    return results.assemble(RunSpec(spec), PathResult.from_json(forward)).as_json()


def _real_shape(result, spec=None):
    spec = spec or {"schema": 1, "dest": "fd00:201::2"}
    env = samples.envelope("pmtu", result, spec, lead="198.18.200.1")
    env["result"]["participants"] = ["198.18.200.1", "fd00:201::2"]
    env["result"]["tool"] = {"name": "jumbocheck", "version": "1.0"}
    return env


def test_the_tool_result_names_the_source_address_and_validates():
    result = _assemble({"dest": "fd00:201::2"}, copy.deepcopy(FORWARD))
    assert result["source-ip"] == "fd00:200::1"
    assert validate.check_result(result) == (True, None)
    throughput = pair_result.assemble(PathResult.from_json(FORWARD), None, None, "no peer")
    assert throughput.source_ip == "fd00:200::1"


def test_the_kernel_says_which_address_it_sends_from():
    assert resolve.source_address("127.0.0.1", 4) == "127.0.0.1"
    assert resolve.source_address("::1", 6) == "::1"
    assert resolve.source_address("192.0.2.9", 4, source="192.0.2.1") == "192.0.2.1"


def test_an_ipv6_run_without_source_is_archived_in_its_own_family():
    result = _assemble({"dest": "fd00:201::2"}, copy.deepcopy(FORWARD))
    rec = records.normalize(_real_shape(result))[0]
    assert (rec["source"], rec["source_ip"], rec["dest"], rec["dest_ip"], rec["ip_version"]) == (
        "fd00:200::1", "fd00:200::1", "fd00:201::2", "fd00:201::2", 6)
    assert records.path_key(rec) == "fd00:200::1|fd00:201::2|6|pmtu"
    # The IPv4 run of the same task keeps the lead's name (its own family).
    v4 = dict(copy.deepcopy(FORWARD), **{"ip-version": 4, "dest-ip": "198.18.201.2",
                                          "source-ip": "198.18.200.1"})
    rec4 = records.normalize(_real_shape(_assemble({}, v4),
                                         {"schema": 1, "dest": "198.18.201.2"}))[0]
    assert (rec4["source"], rec4["source_ip"]) == ("198.18.200.1", "198.18.200.1")
    # A source the task named stays, whatever the result says.
    named = records.normalize(_real_shape(result, {"schema": 1, "dest": "fd00:201::2",
                                                   "source": "fd00:200::1"}))[0]
    assert named["source"] == "fd00:200::1"


def test_the_report_rows_never_mix_families(tmp_path):
    url = "sqlite:///%s" % (tmp_path / "r1.db")
    store = open_store(url)
    v6 = _assemble({"dest": "fd00:201::2"}, copy.deepcopy(FORWARD))
    assert store.put_many([_real_shape(v6)]) == [None]
    rows = store.latest()
    store.close()
    assert [(r["source"], r["ip_version"]) for r in rows] == [("fd00:200::1", 6)]


def test_the_record_keeps_the_flows_asked_beside_those_measured(tmp_path):
    """A single-ended run asked for 16 flows measured 12 (the dest's ICMP budget left the
    others unstarted: flows-not-measured 4): flows 12, flows_asked 16, in the record and in
    the SQLite store's latest row; a result without a flow list asks nothing known."""
    result = samples.pmtu_result(flows=12)
    result["flows-not-measured"] = 4
    rec, _raw = records.normalize(samples.envelope("pmtu", result, {"schema": 1, "dest": "b"}))
    assert (rec["flows"], rec["flows_asked"], rec["jumbo"]) == (12, 16, True)
    whole, _raw = records.normalize(samples.envelope("pmtu", samples.pmtu_result(flows=4),
                                                     {"schema": 1, "dest": "c"}))
    assert (whole["flows"], whole["flows_asked"]) == (4, 4)
    pair, _raw = records.normalize(samples.pair_envelope())
    assert pair["flows_asked"] is None
    store = open_store("sqlite:///" + str(tmp_path / "asked.db"))
    try:
        assert not [o for o in store.put_many([rec]) if o]
        row = store.conn.execute("SELECT flows, flows_asked FROM latest_rows").fetchall()
    finally:
        store.close()
    assert row == [(12, 16)]
