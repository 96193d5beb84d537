"""protocol/jumbocheck.py: merged-results loads only what merging needs.

pScheduler's runner gives a tool's merged-results 5 s, hard-coded (5.2.5 and 5.3), and
kills it after: on the real mesh's busy nodes the tool's whole import took most of that and
13 of 24 runs failed "Process took too long to run". Merging needs the result modules and
the result schema, not the probe, the reflector or the plugin enumeration."""

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

_PROBE = r"""
import json, sys
from jumbo.protocol import jumbocheck
merged = jumbocheck.merged_results(json.dumps({
    "test": {"type": "pmtu", "spec": {"dest": "198.18.0.2", "schema": 1}},
    "results": [None, None]}))
heavy = sorted(m for m in sys.modules if m.startswith(("jumbo.tool.runner", "jumbo.probe",
                                                       "jumbo.tool.reflector", "jumbo.protocol.enumeration")))
print(json.dumps({"merged": merged, "heavy": heavy}))
"""


def test_merged_results_loads_no_probe_runner_or_enumeration():
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python-jumbo"))
    out = json.loads(subprocess.run([sys.executable, "-c", _PROBE], env=env, check=True,
                                    stdout=subprocess.PIPE, universal_newlines=True,
                                    timeout=120).stdout)
    assert out["heavy"] == []
    # and it still answers: a run whose source gave nothing fails, saying so
    assert out["merged"]["succeeded"] is False
    assert "source participant produced no result" in out["merged"]["error"]
