"""The adoption record: one flat row per archived pScheduler result.

Every store keeps these rows (SQLite columns, the `jumbo` object of an
OpenSearch document) and the report reads stores through these field names.

Input accepted by `normalize()`:
  * an archiver envelope, as the archiver daemon sends it
    (`{"data", "task-href", "run-href", "result": {...}, "attempts"}`),
  * a bare pScheduler result object (what the stock `http` archiver posts:
    `{"id", "schedule", "test", "tool", "participants", "result", "run", "task", "reference"}`),
  * an already flat record (has `test_type` and `id`), e.g. read back from a store.

Fields (None where the test cannot tell):

  id              sha1 of the run href (or of result id + test type + start when no href is known):
                  the same run archived twice has the same id, so it is stored once
  run_href, task_href
  test_type       pmtu | jumbo-throughput | trace | throughput | latency
                  (latencybg and rtt map to latency)
  tool            tool name
  start           measurement start, ISO 8601 UTC ("2026-05-20T10:14:41Z")
  source, dest    host names as written in the spec (source falls back to the lead participant)
  source_ip, dest_ip   IP literals from the spec, else `source-ip`/`dest-ip` of the result
  source_site, dest_site  task `reference` keys "source-site" / "dest-site" (how our pSConfig
                  templates fill them; `reference.jumbo.source-site` is accepted too); a host->site
                  mapping can be applied later with `apply_sites()`
  ip_version      4 | 6 (spec, result, or the IP literal)
  succeeded, error
  path_mtu        pmtu and jumbo-throughput: `path-mtu`; trace: smallest per-hop `mtu`
                  (tracepath); throughput: None
  local_mtu       pmtu: `local-mtu` (the source host's interface MTU)
  target_mtu      pmtu: result/spec `target-mtu`, else 9000
  jumbo           pmtu: result `jumbo`, else path_mtu >= target_mtu; trace: same rule
  pmtud           pmtu: ok|blackhole|not-needed|unknown; trace: "unknown"
  partial         pmtu: True for a per-flow (ECMP) black hole: some measured flows vanish
                  silently, others do not; unmeasured (`unknown`) flows do not count
  blackhole_ttl, blackhole_ip, blackhole_size   pmtu: `blackhole` object
  reverse_path_mtu, reverse_pmtud               pmtu
  hops            list of {ttl, ip, mtu} (pmtu `hops`; trace: first path)
  flows           pmtu: number of flows probed
  flows_asked     pmtu: flows the run was asked for: those probed and those never started
                  (`flows-not-measured`: a single-ended run's dest ICMP budget left no time
                  for them); None for a result with no flow list, and in rows stored before
                  the record kept it (unknown, never taken as all measured)
  blackhole_flows pmtu: how many of them black-holed (measured flows whose big packets
                  vanished); with `flows`, the share a partial black hole takes, which the
                  report needs to judge how many clean flows later clear it
  throughput_standard, throughput_jumbo (bit/s), gain
                  jumbo-throughput: `standard.mean` / `jumbo.mean` / `gain` (pmtu results
                  archived before the split carry them in `throughput`); throughput test: the
                  summary throughput goes to throughput_jumbo when the MSS shows a jumbo MTU
                  (MSS > 1500), else to throughput_standard
  mss             throughput: TCP MSS when the tool reports it; jumbo-throughput: the MSS of
                  the jumbo legs (as the kernel sent them when the wire showed it)
  rtt             seconds. latency/latencybg: 2 x median one-way delay; rtt: mean round trip
  loss            fraction. latency/latencybg: packets-lost / packets-sent; rtt: loss

Values are read from a result by jumbo.archive.values (as_int, host_of, ...).
"""

import hashlib
import json

from ..core import units
from ..core.errors import JumboError
from ..core.mtu import DEFAULT_TARGET_MTU, STANDARD_MTU, is_jumbo
from ..core.result import Blackhole, Flow, Hop, Leg, PairResult, PmtuResult, Throughput
from .values import (as_bool, as_int, as_num, as_obj, as_str, host_of, ip_literal, ip_version_of,
                     same_family)

FIELDS = (
    "id", "run_href", "task_href", "test_type", "tool", "start",
    "source", "dest", "source_ip", "dest_ip", "source_site", "dest_site", "ip_version",
    "succeeded", "error",
    "path_mtu", "local_mtu", "target_mtu", "jumbo", "pmtud", "partial",
    "blackhole_ttl", "blackhole_ip", "blackhole_size", "reverse_path_mtu", "reverse_pmtud",
    "hops", "flows", "blackhole_flows", "flows_asked",
    "throughput_standard", "throughput_jumbo", "gain", "mss", "rtt", "loss",
)

# pScheduler test type -> record test_type
TEST_TYPES = {
    "pmtu": "pmtu",
    "jumbo-throughput": "jumbo-throughput",
    "trace": "trace",
    "throughput": "throughput",
    "latency": "latency",
    "latencybg": "latency",
    "rtt": "latency",
}


class BadRecord(JumboError, ValueError):
    """The input cannot be turned into a record (permanent: retrying will not help)."""


class UnknownTestType(BadRecord):
    pass


def parse_time(text):
    """ISO 8601 (with offset, 'Z' or naive = UTC) -> aware UTC datetime; BadRecord if unreadable."""
    try:
        return units.parse_time(text)
    except ValueError:
        raise BadRecord("unreadable time %r" % (text,))


def iso_utc(value):
    """Canonical text of a UTC instant (jumbo.core.units.iso_utc); BadRecord if unreadable."""
    try:
        return units.iso_utc(value)
    except ValueError:
        raise BadRecord("unreadable time %r" % (value,))


def epoch_ms(value):
    return units.epoch_ms(parse_time(value))


def duration_seconds(value):
    """Seconds of an ISO 8601 duration (jumbo.core.units) or of a plain number; None otherwise."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return units.duration_seconds_or_none(value)


def make_id(run_href, result_id=None, test_type=None, start=None):
    if run_href:
        key = "run:" + run_href
    else:
        key = "id:%s|%s|%s" % (result_id, test_type, start)
    return hashlib.sha1(key.encode("utf-8")).hexdigest()


def empty_record():
    return dict.fromkeys(FIELDS)


def is_record(value):
    return isinstance(value, dict) and "test_type" in value and "id" in value and "result" not in value


def unwrap(value):
    """(inner result object, run_href, task_href) from an envelope or a bare result."""
    if not isinstance(value, dict):
        raise BadRecord("record is not a JSON object")
    if "result" in value and isinstance(value.get("result"), dict) and "test" in value["result"]:
        inner = value["result"]
        run_href = as_str(value.get("run-href"))
        task_href = as_str(value.get("task-href"))
    elif "test" in value:
        inner = value
        run_href = task_href = None
    else:
        raise BadRecord("record has no pScheduler result (no 'result.test' member)")
    run = as_obj(inner.get("run"))
    task = as_obj(inner.get("task"))
    run_href = run_href or as_str(run.get("href"))
    task_href = task_href or as_str(run.get("task-href")) or as_str(task.get("href"))
    return inner, run_href, task_href


def normalize(value):
    """(record, raw) from any accepted input; raw is the pScheduler result object or None."""
    if is_record(value):
        record = empty_record()
        record.update((k, v) for k, v in value.items() if k in record)
        if record["test_type"] not in TEST_TYPES.values():
            raise UnknownTestType("unknown test type %r" % (record["test_type"],))
        if not record["start"]:
            raise BadRecord("record has no start time")
        record["start"] = iso_utc(record["start"])
        return record, value.get("raw") if isinstance(value.get("raw"), dict) else None
    inner, run_href, task_href = unwrap(value)
    return from_result(inner, run_href, task_href), inner


def from_result(inner, run_href=None, task_href=None):
    """The record of one pScheduler result object (see the module docstring)."""
    ptype, spec, res = _test_and_result(inner)
    run = as_obj(inner.get("run"))
    schedule = as_obj(inner.get("schedule"))
    start = schedule.get("start") or run.get("start-time")
    if not start:
        raise BadRecord("result has no start time (schedule.start / run.start-time)")

    rec = empty_record()
    rec["test_type"] = TEST_TYPES[ptype]
    rec["run_href"] = run_href
    rec["task_href"] = task_href
    tool = inner.get("tool")
    rec["tool"] = as_str(tool.get("name")) if isinstance(tool, dict) else as_str(tool)
    rec["start"] = iso_utc(start)
    _endpoints(rec, spec, res, inner.get("participants"))
    reference = as_obj(inner.get("reference"))
    nested = as_obj(reference.get("jumbo"))
    rec["source_site"] = as_str(reference.get("source-site")) or as_str(nested.get("source-site"))
    rec["dest_site"] = as_str(reference.get("dest-site")) or as_str(nested.get("dest-site"))
    succeeded = as_bool(res.get("succeeded"))
    rec["succeeded"] = succeeded if succeeded is not None else False
    error = res.get("error")
    rec["error"] = error if isinstance(error, str) else (json.dumps(error) if error else None)

    MAPPERS[ptype](rec, spec, res)
    _jumbo_verdict(rec)
    rec["id"] = make_id(run_href, inner.get("id"), ptype, rec["start"])
    return rec


def _test_and_result(inner):
    """(pScheduler test type, spec, result object) of a result; BadRecord without them."""
    test = as_obj(inner.get("test"))
    ptype = test.get("type")
    if not isinstance(ptype, str) or not ptype:
        raise BadRecord("result has no test type")
    if ptype not in TEST_TYPES:
        raise UnknownTestType("unknown test type %r (accepted: %s)"
                              % (ptype, ", ".join(sorted(TEST_TYPES))))
    res = inner.get("result")
    if not isinstance(res, dict):
        raise BadRecord("result has no 'result' object")
    return ptype, as_obj(test.get("spec")), res


def _endpoints(rec, spec, res, participants):
    """source, dest, their addresses and the IP version: the spec's names, the result's
    addresses in the run's family."""
    lead = participants[0] if isinstance(participants, list) and participants else None
    rec["source"] = host_of(spec.get("source")) or host_of(spec.get("source-node")) or host_of(lead)
    rec["dest"] = host_of(spec.get("dest")) or host_of(spec.get("dest-node"))
    source_literal = ip_literal(rec["source"])
    dest_literal = ip_literal(rec["dest"])
    rec["ip_version"] = (as_int(spec.get("ip-version")) or as_int(res.get("ip-version"))
                         or ip_version_of(dest_literal or as_str(res.get("dest-ip")))
                         or ip_version_of(source_literal or as_str(res.get("source-ip"))))
    # A literal is the run's address only in the run's family: without `source` in the spec the
    # source is the lead, whose address (IPv4, say) is not what an IPv6 run used: its source-ip is.
    measured = same_family(ip_literal(host_of(res.get("source-ip"))), rec["ip_version"])
    if source_literal and measured and not same_family(source_literal, rec["ip_version"]):
        rec["source"] = source_literal = measured
    rec["source_ip"] = same_family(source_literal, rec["ip_version"]) or measured
    rec["dest_ip"] = same_family(dest_literal, rec["ip_version"]) or as_str(res.get("dest-ip"))


# The result's members -> the record's fields, for the tests that measure the path MTU: the
# typed result's attribute (jumbo.core.result, read from the archived JSON once) is the
# stored field's name (the SQLite column and the OpenSearch field alike). jumbo-throughput
# keeps no verdict of its own.
PATH_FIELDS = (("path_mtu", as_int), ("local_mtu", as_int), ("pmtud", as_str))
PMTU_FIELDS = PATH_FIELDS + (("jumbo", as_bool), ("reverse_path_mtu", as_int),
                             ("reverse_pmtud", as_str))


def _copy(rec, result, fields):
    for name, kind in fields:
        rec[name] = kind(getattr(result, name))


def _jumbo_verdict(rec):
    """The result's own `jumbo` verdict where it has one, else core.mtu.is_jumbo's."""
    if rec["jumbo"] is None and rec["path_mtu"] is not None:
        rec["jumbo"] = is_jumbo(rec["path_mtu"], rec["target_mtu"], rec.get("pmtud"))


def _hop(hop):
    ttl, ip, mtu = hop.ttl, hop.ip, hop.mtu
    # Plain ints and strings (the usual case) as they are; anything else the general way.
    return {"ttl": ttl if type(ttl) is int else as_int(ttl),
            "ip": ip if ip is None or type(ip) is str else as_str(ip),
            "mtu": mtu if type(mtu) is int else as_int(mtu)}


def _map_pmtu(rec, spec, res):
    result = PmtuResult.from_json(res)
    _copy(rec, result, PMTU_FIELDS)
    rec["target_mtu"] = (as_int(result.target_mtu) or as_int(spec.get("target-mtu"))
                         or DEFAULT_TARGET_MTU)
    if isinstance(result.blackhole, Blackhole):
        rec["blackhole_ttl"] = as_int(result.blackhole.ttl)
        rec["blackhole_ip"] = as_str(result.blackhole.ip)
        rec["blackhole_size"] = as_int(result.blackhole.size)
    if isinstance(result.hops, list):
        rec["hops"] = [_hop(h) for h in result.hops if isinstance(h, Hop)]
    if isinstance(result.flows, list):
        _map_flows(rec, [f for f in result.flows if isinstance(f, Flow)])
        rec["flows_asked"] = rec["flows"] + max(0, as_int(result.flows_not_measured) or 0)
    if isinstance(result.throughput, Throughput):
        rec["throughput_standard"] = as_num(as_obj(result.throughput.standard).get("mean"))
        rec["throughput_jumbo"] = as_num(as_obj(result.throughput.jumbo).get("mean"))
        rec["gain"] = as_num(result.throughput.gain)


def _map_flows(rec, flows):
    rec["flows"] = len(flows)
    # A partial (per-flow) black hole: some flows vanish silently while others cross.
    # Flows that could not be measured (`unknown`) say nothing either way.
    verdicts = set(as_str(f.pmtud) for f in flows
                   if f.path_mtu is not None and f.pmtud != "unknown")
    rec["partial"] = "blackhole" in verdicts and len(verdicts) > 1
    rec["blackhole_flows"] = sum(1 for f in flows
                                 if f.pmtud == "blackhole" and f.path_mtu is not None)


def _map_pair(rec, spec, res):
    """jumbo-throughput: the path MTU it measured first and the paired legs' figures."""
    result = PairResult.from_json(res)
    _copy(rec, result, PATH_FIELDS)
    rec["target_mtu"] = DEFAULT_TARGET_MTU
    rec["throughput_standard"] = as_num(as_obj(result.standard).get("mean"))
    rec["throughput_jumbo"] = as_num(as_obj(result.jumbo).get("mean"))
    rec["gain"] = as_num(result.gain)
    seen = [as_int(leg.observed_mss) or as_int(leg.mss)
            for leg in (result.runs if isinstance(result.runs, list) else [])
            if isinstance(leg, Leg) and leg.size == "jumbo" and leg.succeeded]
    seen = [m for m in seen if m]
    rec["mss"] = max(seen) if seen else None


def _map_trace(rec, spec, res):
    rec["target_mtu"] = DEFAULT_TARGET_MTU
    rec["pmtud"] = "unknown"
    paths = res.get("paths")
    if isinstance(paths, list) and paths and isinstance(paths[0], list):
        hops = []
        for ttl, hop in enumerate(paths[0], 1):
            hop = as_obj(hop)
            hops.append({"ttl": ttl, "ip": as_str(hop.get("ip")), "mtu": as_int(hop.get("mtu"))})
        rec["hops"] = hops
        mtus = [h["mtu"] for h in hops if h["mtu"]]
        if mtus:
            rec["path_mtu"] = min(mtus)


def _map_throughput(rec, spec, res):
    summary = as_obj(as_obj(res.get("summary")).get("summary"))
    bits = as_num(summary.get("throughput-bits"))
    if bits is None:
        bits = as_num(res.get("throughput"))
    mss = (as_int(res.get("mss")) or as_int(summary.get("mss"))
           or as_int(as_obj(res.get("tcp")).get("mss")))
    rec["mss"] = mss
    if bits is not None:
        if mss is not None and mss > STANDARD_MTU:
            rec["throughput_jumbo"] = bits
        else:
            rec["throughput_standard"] = bits


def _map_latency(rec, spec, res):
    if "roundtrips" in res or "mean" in res and "packets-sent" not in res:
        # rtt test: ISO durations
        rec["rtt"] = duration_seconds(res.get("mean")) or duration_seconds(res.get("min"))
        loss = as_num(res.get("loss"))
        if loss is None and as_num(res.get("sent")):
            loss = (as_num(res.get("lost")) or 0.0) / as_num(res.get("sent"))
        rec["loss"] = loss
        return
    sent = as_num(res.get("packets-sent"))
    lost = as_num(res.get("packets-lost"))
    if sent:
        rec["loss"] = (lost or 0.0) / sent
    histogram = res.get("histogram-latency")
    if isinstance(histogram, dict) and histogram:
        points = []
        for key, count in histogram.items():
            try:
                points.append((float(key), int(count)))
            except (TypeError, ValueError):
                continue
        points.sort()
        total = sum(c for _, c in points)
        if total:
            half, acc = total / 2.0, 0
            for value, count in points:
                acc += count
                if acc >= half:
                    rec["rtt"] = 2 * value / 1000.0
                    break


MAPPERS = {
    "pmtu": _map_pmtu,
    "jumbo-throughput": _map_pair,
    "trace": _map_trace,
    "throughput": _map_throughput,
    "latency": _map_latency,
    "latencybg": _map_latency,
    "rtt": _map_latency,
}


def path_key(record):
    """The latest-per-path key: source|dest|ip_version|test_type."""
    return "%s|%s|%s|%s" % (record.get("source") or "", record.get("dest") or "",
                            record.get("ip_version") or "", record.get("test_type"))


def apply_sites(record, mapping):
    """Fill missing source_site/dest_site from a {host or ip: site} mapping (returns record)."""
    for end in ("source", "dest"):
        if not record.get(end + "_site"):
            for key in (record.get(end), record.get(end + "_ip")):
                if key and key in mapping:
                    record[end + "_site"] = mapping[key]
                    break
    return record
