"""`python -m bench ecmp [CASE ...] [--runs 50] [--versions 4,6] [--modes echo,udp,reflector]
[--flows N] [--reflector-flows 40] [--seed 2]`: partial (ECMP) black holes, N runs back to back
per case, family and mode (needs root to build the lab; the tool runs as `jumbotest`).

Cases (lab.scenarios.ECMP_SCENARIOS): 4 equal-cost members, one an 8950 overlay link whose
router drops PTBs, clean and with 2% loss; 2 members, one through a 1500 link whose router
drops PTBs. Modes:
  echo       single-ended jumbocheck, ICMP echo sockets allowed (ping_group_range 0..2^31-1);
             echo takes one fixed member (the `--seed` fixes which), the UDP flows verify
  udp        single-ended jumbocheck, ping_group_range "1 0" (Debian's default): UDP flows
  reflector  a two-participant pmtu run through tests/harness.py (both nodes run the tool's
             `run` as pScheduler would), the dest's node answering the forward probes: the
             spec asks for it with `"reflector": true` when the spec schema has that field,
             else with `"reverse": true` (whose dest participant also answers them)
Per case, family and mode: how many runs were exact (path MTU of the bad member, pmtud
blackhole, partial: some flows crossed), how many of the found holes were located at the
truth's hop (TTL and address), unconfirmed (a flow with no path MTU, or pmtud unknown), wrong
(anything else; a run whose flows all took a bad member and report the hole for all is
`whole`, said at the end of the line), wall time of the whole process (single-ended: around
the jumbocheck process; reflector: from the slot's start to the lead's exit, its start wait
included, beside the forward phase's own `elapsed`; when both participants had ended at the
end of the line), `fmiss`: misses although a measured flow took the bad member (each flow's
member told after the run by the lab's nftables counters; never by chance), `lucky`: runs
none of whose flows took the bad member (the lab's own draw of the chance the bound gives),
`nm`: runs with flows the engine said it did not measure / those flows in all
(flows-not-measured), and the miss rate (every flow crossed: reported 9000, not-needed)
beside the chance bound (1 - bad share)^flows (echo: its fixed member's, times
(1 - bad share)^(flows - 1)). Before the runs: the members 40 UDP source ports take and the
one echo takes (nftables counters), so a bound is never quoted for a lab that does not spread.
"""

import argparse
import datetime
import json
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for _path in (ROOT, os.path.join(ROOT, "python-jumbo"), os.path.join(ROOT, "tests")):
    if _path not in sys.path:
        sys.path.insert(0, _path)

from bench.probe import ALL_GROUPS, JUMBOCHECK, USER, timed  # noqa: E402 - after sys.path

NO_ECHO = (1, 0)
MODES = ("echo", "udp", "reflector")
CASES = ("ecmp4-overlay-blackhole", "ecmp4-overlay-blackhole-lossy", "ecmp2-1500-blackhole")
UDP_PORT = 33434  # jumbo.probe.transport.DEFAULT_PORT: the UDP probes' dest port
SEED = 2  # on ecmp4-overlay-blackhole echo then takes a good member in both families


def reflector_spec(dest, flows):
    """The pmtu spec of a run probing through the dest's reflector: `reflector: true` once
    the spec has it (jumbo.testtype.spec), else `reverse: true` (the two-participant spec that
    also brings the dest's reflector)."""
    from jumbo.testtype import spec as specs
    spec = {"schema": 1, "dest": dest, "flows": flows, "reflector": True}
    if specs.validate(spec)[0]:
        return spec
    del spec["reflector"]
    spec["reverse"] = True
    return spec


def single_ended(lab, dest, flows):
    """One jumbocheck run as `jumbotest` in src: (result or {}, whole-process wall s)."""
    run = timed(lab, [JUMBOCHECK, dest, "--json"] + (["--flows", str(flows)] if flows else []))
    try:
        result = json.loads(run["out"])
    except ValueError:
        result = {"succeeded": False, "error": (run.get("out") or "")[-300:]}
    return result, run.get("wall")


def through_reflector(lab, spec):
    """One two-participant run (harness): (merged result, wall from slot start to the lead's
    exit)."""
    import harness
    places = [{"lab": lab, "node": node, "user": USER} for node in ("src", "dst")]
    try:
        outcome = harness.run_tool_participants("jumbocheck", spec, places, start_in=0.5)
    except (RuntimeError, AssertionError) as err:
        return {"succeeded": False, "error": str(err)[:300]}, None, None
    returned = time.time()
    start = outcome.inputs[0]["schedule"]["start"]
    start = datetime.datetime.fromisoformat(start).timestamp()
    # The runs were launched together and the last one ended just before merged-results ran:
    # the lead's exit is launch + its own elapsed (the dest's run may outlive it, up to the
    # slot's end when the final STATUS is lost: `pair` is when both had ended).
    pair_end = returned - outcome.merged_completed.elapsed
    launch = pair_end - max(done.elapsed for done in outcome.runs)
    wall = launch + outcome.runs[0].elapsed - start
    # The port the dest's reflector took (the first free of its candidates): its own report.
    dest = outcome.results[1] if len(outcome.results) > 1 else None
    port = (((dest or {}).get("result") or {}).get("reflector") or {}).get("port") \
        if isinstance(dest, dict) else None
    merged = outcome.merged or {"succeeded": False, "error": "merged-results failed"}
    merged["_pair"] = pair_end - start
    return merged, wall, port


def on_bad_members(lab, version, result, dport, bad, echo_bad):
    """How many of the run's flows took a black-holed member (each flow's source port and
    the run's dest port counted on the lab's splitting router after the run; echo's flow
    takes echo's fixed member); None when a port's member could not be told."""
    flows = result.get("flows") or []
    ports = [f.get("source-port") for f in flows if f.get("source-port")]
    members = lab.ecmp_members("src", "dst", version, ports, dport) if ports and dport else {}
    count = 0
    for flow in flows:
        port = flow.get("source-port")
        if port is None:
            count += 1 if echo_bad else 0
        elif port not in members:
            return None
        else:
            count += 1 if members[port] in bad else 0
    return count


def classify(result, truth, on_bad=None):
    """exact / whole / miss / unconfirmed / wrong, and whether a found hole sits at the
    truth's hop. `whole`: every flow took a bad member and all report the hole (right for
    those flows, but not partial).
    A miss when `on_bad` flows (> 0) took a black-holed member is `false-miss`: the hole was
    on a measured flow's path and still not reported."""
    flows = result.get("flows") or []
    verdicts = set(f.get("pmtud") for f in flows)
    unconfirmed = not result.get("succeeded") or result.get("path-mtu") is None \
        or result.get("pmtud") == "unknown" or any(f.get("path-mtu") is None for f in flows)
    partial = "blackhole" in verdicts and len(verdicts) > 1
    hole = result.get("blackhole") or {}
    located = result.get("pmtud") == "blackhole" and hole.get("ttl") == truth["blackhole-ttl"] \
        and hole.get("ip") == truth["blackhole-ip"]
    if unconfirmed:
        kind = "unconfirmed"
    elif result.get("path-mtu") == truth["path-mtu"] and result.get("pmtud") == "blackhole" \
            and partial:
        kind = "exact"
    elif result.get("path-mtu") == truth["path-mtu"] and verdicts == {"blackhole"} \
            and on_bad == len(flows):
        kind = "whole"
    elif result.get("path-mtu") == truth["local-mtu"] and result.get("pmtud") == "not-needed":
        kind = "false-miss" if on_bad else "miss"
    else:
        kind = "wrong"
    return kind, located


def chance_bound(truth, flows, mode, echo_member_bad):
    """The probability that every flow hashes onto a good member."""
    good = 1.0 - truth["bad-share"]
    if mode == "echo":
        return 0.0 if echo_member_bad else good ** (flows - 1)
    return good ** flows


def _stats(values):
    values = sorted(v for v in values if v is not None)
    if not values:
        return "-"
    return "%.2f/%.2f/%.2f" % (values[0], values[len(values) // 2], values[-1])


def _options(argv):
    parser = argparse.ArgumentParser(
        prog="python -m bench ecmp", description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("cases", nargs="*", metavar="CASE",
                        help="ECMP cases (default: %s)" % ", ".join(CASES))
    parser.add_argument("--runs", type=int, default=50, help="runs back to back per case (50)")
    parser.add_argument("--versions", default="4,6", help="IP versions (4,6)")
    parser.add_argument("--modes", default=",".join(MODES), help="echo, udp, reflector")
    parser.add_argument("--flows", type=int, default=None,
                        help="flows of single-ended runs (default: the spec's, 4)")
    parser.add_argument("--reflector-flows", type=int, default=40,
                        help="flows of runs through the reflector (40, the template's)")
    parser.add_argument("--seed", type=int, default=SEED,
                        help="ECMP hash seed of the lab's nodes (fixes echo's member; %d)" % SEED)
    parser.add_argument("--json", metavar="FILE", help="also write every run's row to FILE")
    args = parser.parse_args(argv)
    try:
        versions = tuple(int(v) for v in args.versions.split(","))
    except ValueError:
        parser.error("--versions takes 4, 6 or 4,6")
    modes = tuple(args.modes.split(","))
    if set(versions) - {4, 6} or set(modes) - set(MODES):
        parser.error("--versions takes 4 and/or 6, --modes echo, udp and/or reflector")
    if args.runs < 1 or not 1 <= args.reflector_flows <= 64 or \
            (args.flows is not None and not 1 <= args.flows <= 64):
        parser.error("--runs >= 1, flows 1..64")
    from lab import scenarios
    for case in args.cases:
        if case not in scenarios.ECMP_SCENARIOS:
            parser.error("unknown case %r (known: %s)" % (case, ", ".join(CASES)))
    args.versions, args.modes = versions, modes
    args.cases = args.cases or list(CASES)
    return args


def _default_flows():
    from jumbo.testtype.spec import DEFAULTS
    return DEFAULTS["flows"]


def run_case(case, mode, args, rows):
    """Every family's runs of one case and mode on one lab; one summary line per family."""
    from lab import Lab, scenarios
    topology = scenarios.get(case)
    groups = ALL_GROUPS if mode == "echo" else NO_ECHO
    with Lab(topology, ping_group_range=groups, hash_seed=args.seed) as lab:
        for version in args.versions:
            truth = lab.truth("src", "dst", version)
            dest = lab.address("dst", version)
            spread = lab.ecmp_hits("src", "dst", version)
            echo = [m for m, n in lab.ecmp_hits("src", "dst", version, echo=True).items() if n]
            bad = set(m["path"][m["blackhole-ttl"]] for m in truth["members"]
                      if m["blackhole-ttl"])
            echo_bad = bool(echo) and echo[0] in bad
            if mode == "reflector":
                flows = args.reflector_flows
                spec = reflector_spec(dest, flows)
            else:
                flows = args.flows or _default_flows()
            kinds, located, walls, forward = [], [], [], []
            for _ in range(args.runs):
                if mode == "reflector":
                    result, wall, dport = through_reflector(lab, spec)
                else:
                    result, wall = single_ended(lab, dest, args.flows)
                    dport = UDP_PORT
                on_bad = on_bad_members(lab, version, result, dport, bad, echo_bad)
                kind, at_hop = classify(result, truth, on_bad)
                kinds.append(kind)
                located.append(at_hop)
                walls.append(wall)
                forward.append(result.get("elapsed"))
                rows.append({"case": case, "mode": mode, "version": version, "kind": kind,
                             "located": at_hop, "wall": wall, "elapsed": result.get("elapsed"),
                             "flows": flows, "method": result.get("method"),
                             "not-measured": result.get("flows-not-measured") or 0,
                             "on-bad": on_bad, "pair": result.get("_pair"),
                             "blackhole": result.get("blackhole"),
                             "path-mtu": result.get("path-mtu"), "pmtud": result.get("pmtud"),
                             "error": result.get("error"), "diags": result.get("diags")})
            n = len(kinds)
            found = sum(1 for r in rows[-n:] if r["pmtud"] == "blackhole")
            short = [r["not-measured"] for r in rows[-n:] if r["not-measured"]]
            bound = chance_bound(truth, flows, mode, echo_bad)
            lucky = sum(1 for r in rows[-n:] if r["on-bad"] == 0)
            line = ("%-30s %-9s %d %4d %5d %4d/%-4d %5d %5d %5d %6s  %-17s %-17s %5.1f%% %5.1f%% "
                    "%8.4f%% %3d"
                    % (case, mode, version, n, kinds.count("exact"), sum(located), found,
                       kinds.count("unconfirmed"), kinds.count("wrong"), kinds.count("false-miss"),
                       "%d/%d" % (len(short), sum(short)), _stats(walls),
                       _stats(forward), 100.0 * (kinds.count("miss") + kinds.count("false-miss")) / n, 100.0 * lucky / n,
                       100.0 * bound, flows))
            hit = sum(1 for count in spread.values() if count)
            line += "  members hit by 40 ports %d/%d, echo on %s%s" % (
                hit, len(spread), ",".join(echo) or "?", " (bad)" if echo_bad else "")
            if kinds.count("whole"):
                line += ", %d runs all flows on the bad member (reported whole)" % \
                    kinds.count("whole")
            if mode == "reflector":
                line += ", spec %s, both participants ended %s s" % (
                    "reflector" if spec.get("reflector") else "reverse",
                    _stats([r["pair"] for r in rows[-n:]]))
            print(line)
            sys.stdout.flush()


def main(argv):
    args = _options(argv)
    load = os.getloadavg()
    print("bench ecmp %s, %d runs per case, family and mode; load average at start: "
          "%.2f %.2f %.2f on %d cores" % (datetime.date.today().isoformat(), args.runs,
                                          load[0], load[1], load[2], os.cpu_count()))
    print("%-30s %-9s %1s %4s %5s %9s %5s %5s %5s %6s  %-17s %-17s %6s %6s %9s %3s" % (
        "case", "mode", "v", "runs", "exact", "located", "unconf", "wrong", "fmiss", "nm",
        "wall s min/med/max", "elapsed s m/m/m", "miss", "lucky", "bound", "flows"))
    rows = []
    for case in args.cases:
        for mode in args.modes:
            run_case(case, mode, args, rows)
    if args.json:
        with open(args.json, "w") as out:
            json.dump(rows, out, indent=1)
    load = os.getloadavg()
    print("load average at end: %.2f %.2f %.2f" % load)
    bad = [r for r in rows if r["kind"] in ("unconfirmed", "wrong")
           or (r["pmtud"] == "blackhole" and not r["located"])]
    return 1 if bad else 0
