"""Capture a real `direction: both` jumbo-throughput result for tests/data (run as root).

    PYTHONPATH=.:python-jumbo:tests .venv/bin/python tests/capture_pair_both.py SCENARIO OUT.json

Builds the namespace lab SCENARIO, runs the pair test `--direction both` through the plugin
harness exactly as tests/lab/test_pair_lab.py does (cli-to-spec, participants, both tool runs as
the unprivileged user, merged-results), and writes {"made", "scenario", "truth", "spec",
"result"} where `truth` is the lab's own answer for each direction. The lab is removed on exit.
"""

import datetime
import json
import sys

import harness
from lab import Lab, scenarios

TEST = "jumbo-throughput"
USER = "jumbotest"


def capture(scenario):
    with Lab(scenarios.get(scenario)) as lab:
        argv = ["--dest", lab.address("dst", 4), "--duration", "2", "--omit", "0",
                "--direction", "both"]
        spec = harness.invoke("test", TEST, "cli-to-spec", argv=argv).json()
        places = [{"lab": lab, "node": node, "user": USER} for node in ("src", "dst")]
        merged = harness.run_tool_participants("jumbocheck", {"type": TEST, "spec": spec},
                                               places, start_in=1.0).merged
        truth = {"forward": lab.truth("src", "dst"), "reverse": lab.truth("dst", "src")}
        return {"made": "tests/capture_pair_both.py %s at %s" % (
            scenario, datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")),
            "scenario": scenario, "truth": truth, "spec": spec, "result": merged}


if __name__ == "__main__":
    found = capture(sys.argv[1])
    with open(sys.argv[2], "w") as out:
        json.dump(found, out, indent=1, sort_keys=True)
        out.write("\n")
