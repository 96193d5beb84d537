"""Does the large template's short jumbo-throughput spec still measure the gain? Runs of the
shipped template's spec (forward, ABBA, 2 s omit + 7 s legs) and the large template's (both
directions, AB, 1 s omit + 2 s legs) alternate on the same namespace labs, through the
jumbocheck tool as pScheduler runs it (tests/harness.py run_tool_participants, both ends as
the unprivileged `jumbotest`); per spec: the slot, the gains (median and range, per
direction for the short one), the gain's own noise estimate and the verdicts, beside the
lab's ground truth (clean-jumbo: a 9000 path, jumbo must win; vxlan-blackhole: a PMTUD
black hole, the verdict must say so).

`python -m bench.schedule_noise [--runs N] [--cases clean-jumbo,vxlan-blackhole]` (needs
root for the namespaces; every lab is removed, also on failure or Ctrl-C).
"""

import argparse
import json
import os
import statistics
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for _path in (ROOT, os.path.join(ROOT, "python-jumbo"), os.path.join(ROOT, "tests")):
    if _path not in sys.path:
        sys.path.insert(0, _path)

USER = "jumbotest"
CASES = ("clean-jumbo", "vxlan-blackhole")
TEMPLATES = (("shipped", "lhcone-jumbo-mesh.json"), ("large", "lhcone-jumbo-mesh-large.json"))
# The verdict every run must give on these labs (see the docstring).
EXPECTED = "jumbo-faster"


def specs():
    found = []
    for label, name in TEMPLATES:
        with open(os.path.join(ROOT, "psconfig", name)) as handle:
            spec = json.load(handle)["tests"]["jumbo-throughput-v4"]["spec"]
        found.append((label, {k: v for k, v in spec.items() if k not in ("source", "dest")}))
    return found


def one_run(lab, spec):
    import harness
    full = dict(spec, schema=1, source=lab.address("src", 4), dest=lab.address("dst", 4))
    outcome = harness.run_tool_participants(
        "jumbocheck", {"type": "jumbo-throughput", "spec": full},
        [{"lab": lab, "node": n, "user": USER} for n in ("src", "dst")], start_in=1.0)
    return outcome.duration, outcome.merged or {}


def _gains(results, direction=None):
    if direction is None:
        return [r.get("gain") for r in results if r.get("gain") is not None]
    return [((r.get("by-direction") or {}).get(direction) or {}).get("gain") for r in results
            if ((r.get("by-direction") or {}).get(direction) or {}).get("gain") is not None]


def _line(values):
    if not values:
        return "-"
    return "%.2f (%.2f-%.2f, n=%d)" % (statistics.median(values), min(values), max(values),
                                        len(values))


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m bench.schedule_noise",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--cases", default=",".join(CASES))
    args = parser.parse_args(argv)
    cases = [c for c in args.cases.split(",") if c]
    if args.runs < 1 or args.runs > 50 or set(cases) - set(CASES):
        parser.error("--runs 1..50, --cases from %s" % ", ".join(CASES))
    from lab import Lab, scenarios
    failed = False
    for case in cases:
        results = {label: [] for label, _ in specs()}
        slots = {}
        with Lab(scenarios.get(case)) as lab:
            truth = lab.truth("src", "dst", 4)
            for _ in range(args.runs):   # alternate, so both specs see the same load
                for label, spec in specs():
                    slots[label], merged = one_run(lab, spec)
                    results[label].append(merged)
        print("%s (truth: path MTU %s, pmtud %s; verdict %s):" % (
            case, truth["path-mtu"], truth["pmtud"], EXPECTED))
        for label, _ in specs():
            got = results[label]
            verdicts = {}
            for r in got:
                verdicts[r.get("verdict")] = verdicts.get(r.get("verdict"), 0) + 1
            noise = [r.get("gain-noise") for r in got if r.get("gain-noise") is not None]
            exact = sum(1 for r in got if r.get("path-mtu") == truth["path-mtu"]
                        and r.get("pmtud") == truth["pmtud"])
            print("  %-7s slot %3d s  gain %-28s noise %-22s verdicts %s  path exact %d/%d" % (
                label, slots[label], _line(_gains(got)), _line(noise),
                json.dumps(verdicts, sort_keys=True), exact, len(got)))
            for direction in ("forward", "reverse"):
                if any(r.get("by-direction") for r in got):
                    print("  %7s %-14s gain %s" % ("", direction, _line(_gains(got, direction))))
            failed = failed or verdicts.get(EXPECTED, 0) != len(got) or exact != len(got)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
