"""protocol/{pmtu,jumbo_throughput,archiver}.py: the methods pScheduler calls with a short,
hard-coded limit load no plugin enumeration, hence no forms, tool runner or probe stack.

pScheduler 5.2.5's API gives a test's participants and cli-to-spec 5 s, its database gives a
tool's can-run 5 s, and every task submission runs spec-is-valid and the archiver's
data-is-valid; on the real mesh's busy nodes these calls ran out of time ("Unable to determine
participants: Process took too long to run"). The enumeration pulled in the forms, the pair
test and the tool runner with the whole probe (measured: pmtu's import 0.285 -> 0.209 s CPU,
the archiver's data-is-valid 0.307 -> 0.242 s). Each method runs in a fresh interpreter, as
pScheduler runs it, and must still answer right."""

import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HEAVY = ("jumbo.protocol.enumeration", "jumbo.testtype.forms", "jumbo.tool.runner",
         "jumbo.probe", "jumbo.tool.reflector")

_PROBE = r"""
import json, sys
from jumbo.protocol import %(module)s as plugin
answer = plugin.%(call)s
heavy = sorted(m for m in sys.modules if m.startswith(%(heavy)r))
print(json.dumps({"answer": answer, "heavy": heavy}))
"""

SPEC = json.dumps({"schema": 1, "source": "198.18.0.1", "dest": "198.18.0.2",
                   "ip-version": 4})
CASES = {
    "pmtu participants": ("pmtu", "participants(%r)" % SPEC,
                          {"participants": ["198.18.0.1"]}),
    "pmtu spec-is-valid": ("pmtu", "spec_is_valid(%r)" % SPEC, {"valid": True}),
    "pmtu spec-is-valid, hostile": ("pmtu", "spec_is_valid(%r)" % '{"dest": 7}', False),
    "archiver data-is-valid": ("archiver", "data_is_valid(%r)" % json.dumps(
        {"_url": "http://198.18.0.9:9200"}), {"valid": True}),
    "archiver data-is-valid, hostile": ("archiver", "data_is_valid('[1]')", False),
}


def _run(module, call):
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python-jumbo"))
    code = _PROBE % {"module": module, "call": call, "heavy": HEAVY}
    done = subprocess.run([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE,
                          universal_newlines=True, timeout=120, check=True)
    return json.loads(done.stdout)


@pytest.mark.parametrize("case", sorted(CASES))
def test_short_limit_methods_load_no_enumeration_and_still_answer(case):
    module, call, expected = CASES[case]
    out = _run(module, call)
    assert out["heavy"] == []
    if expected is False:
        assert out["answer"]["valid"] is False and out["answer"]["error"]
    else:
        assert out["answer"] == expected


@pytest.mark.parametrize("module,kind,name", [("pmtu", "test", "pmtu"),
                                              ("jumbo_throughput", "test", "jumbo-throughput"),
                                              ("archiver", "archiver", "jumbo")])
def test_enumerate_still_loads_the_enumeration_when_asked(module, kind, name):
    out = _run(module, "enumerate_plugin()")
    assert "jumbo.protocol.enumeration" in out["heavy"]
    assert out["answer"]["name"] == name
