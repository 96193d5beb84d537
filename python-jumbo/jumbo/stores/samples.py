"""Synthetic archiver envelopes (pmtu, trace, throughput, latencybg) for tests, demo and benchmarks.

They have the shape the pScheduler archiver daemon sends (contract section 7.4);
the values are made up from the arguments, nothing is measured here.
"""

import datetime
import uuid

BASE_TIME = datetime.datetime(2026, 5, 20, 10, 0, 0)


def _start(minutes):
    return (BASE_TIME + datetime.timedelta(minutes=minutes)).strftime("%Y-%m-%dT%H:%M:%S+00:00")


def envelope(test_type, result, spec, run=None, lead="ps-a.example.org", minutes=0,
             reference=None, tool="jumbocheck", data=None, attempts=0):
    """One archiver input record around `result`."""
    task = str(uuid.uuid5(uuid.NAMESPACE_URL, "task|%s|%s|%s" % (test_type, lead, spec.get("dest"))))
    run = run or str(uuid.uuid4())
    task_href = "https://%s/pscheduler/tasks/%s" % (lead, task)
    run_href = "%s/runs/%s" % (task_href, run)
    start = _start(minutes)
    return {
        "data": data if data is not None else {},
        "task-href": task_href,
        "run-href": run_href,
        "attempts": attempts,
        "last-attempt": None,
        "result": {
            "id": run,
            "schedule": {"start": start, "duration": "PT20S"},
            "test": {"type": test_type, "spec": spec},
            "tool": {"name": tool, "version": "1.0"},
            "participants": [lead, spec.get("dest")],
            "result": result,
            "run": {"href": run_href, "task-href": task_href, "start-time": start,
                    "end-time": start, "added": start},
            "task": {"href": task_href,
                     "schedule": {"repeat": "PT6H", "slip": "PT3H"}},
            "reference": reference if reference is not None else
            {"source-site": "SITE-A", "dest-site": "SITE-B"},
        },
    }


def pmtu_result(path_mtu=9000, local_mtu=9000, pmtud="ok", blackhole=None, flows=2,
                succeeded=True, hops=3, dest_ip="198.18.0.2", ip_version=4):
    jumbo = path_mtu is not None and path_mtu >= 9000
    result = {
        "schema": 1, "succeeded": succeeded, "error": None if succeeded else "probe failed",
        "path-mtu": path_mtu, "local-mtu": local_mtu, "target-mtu": 9000,
        "jumbo": jumbo if succeeded else None, "pmtud": pmtud, "method": "icmp-echo",
        "ip-version": ip_version, "dest-ip": dest_ip, "blackhole": blackhole,
        "hops": [{"ttl": t, "ip": "198.18.%d.1" % t, "mtu": path_mtu if t == hops else local_mtu,
                  "rtt": "PT0.0001S"} for t in range(1, hops + 1)],
        "flows": [{"flow": f, "source-port": 33434 + f, "flow-label": None,
                   "path-mtu": path_mtu, "pmtud": pmtud} for f in range(flows)],
        "reverse-path-mtu": path_mtu, "reverse-pmtud": pmtud,
        "probes": 12, "elapsed": 1.5, "ptb": [], "throughput": None,
    }
    return result


def pair_result(gain=1.8, path_mtu=9000, standard=4e9):
    """A jumbo-throughput result (the paired 1500/9000 legs), with no per-leg detail."""
    return {"schema": 1, "succeeded": True, "error": None, "diags": "", "path-mtu": path_mtu,
            "pmtud": "not-needed", "runs": [], "standard": {"mean": standard, "n": 2},
            "jumbo": {"mean": standard * gain, "n": 2}, "gain": gain, "gain-noise": None,
            "mathis": None, "verdict": "jumbo-faster" if gain > 1 else "no-difference",
            "skipped": None, "jumbo-mtu": path_mtu, "notes": []}


def pair_envelope(source="ps-a.example.org", dest="ps-b.example.org", minutes=0, gain=1.8,
                  reference=None):
    spec = {"schema": 1, "source": source, "dest": dest, "ip-version": 4}
    return envelope("jumbo-throughput", pair_result(gain=gain), spec, lead=source,
                    minutes=minutes, reference=reference)


def pmtu_envelope(index=0, source="ps-a.example.org", dest=None, minutes=None, run=None,
                  path_mtu=9000, **kwargs):
    dest = dest or "ps-%d.example.org" % (index % 50)
    spec = {"schema": 1, "source": source, "dest": dest, "ip-version": 4}
    return envelope("pmtu", pmtu_result(path_mtu=path_mtu, **kwargs), spec, run=run, lead=source,
                    minutes=index if minutes is None else minutes)


def trace_envelope(mtus=(9000, 9000, 1500), source="ps-a.example.org", dest="ps-c.example.org",
                   minutes=0):
    hops = [{"ip": "198.18.%d.1" % (i + 1), "rtt": "PT0.001S", "mtu": m} for i, m in enumerate(mtus)]
    return envelope("trace", {"schema": 1, "succeeded": True, "paths": [hops]},
                    {"schema": 1, "source": source, "dest": dest}, lead=source, minutes=minutes,
                    tool="tracepath")


def throughput_envelope(bits=9.1e9, mss=8948, source="ps-a.example.org", dest="ps-c.example.org",
                        minutes=0):
    result = {"schema": 1, "succeeded": True, "mss": mss,
              "summary": {"summary": {"throughput-bits": bits, "retransmits": 3,
                                      "start": 0, "end": 10}},
              "intervals": []}
    return envelope("throughput", result, {"schema": 1, "source": source, "dest": dest},
                    lead=source, minutes=minutes, tool="iperf3")


def latency_envelope(sent=600, lost=6, source="ps-a.example.org", dest="ps-c.example.org",
                     minutes=0):
    result = {"schema": 1, "succeeded": True, "packets-sent": sent, "packets-lost": lost,
              "packets-received": sent - lost,
              "histogram-latency": {"4.90": 100, "5.00": 400, "5.10": 94}}
    return envelope("latencybg", result, {"schema": 1, "source": source, "dest": dest},
                    lead=source, minutes=minutes, tool="powstream")
