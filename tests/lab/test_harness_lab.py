"""The harness runs a two-participant tool in lab namespaces as the unprivileged user.

A stand-in tool (standard library only) reports where it ran; the real jumbocheck tool is
exercised the same way by its own tests.
"""

import os
import shutil
import tempfile
import textwrap

import pytest

import harness
from lab_support import needs_lab

RUN = """\
#!/usr/bin/env python3
import json, os, sys
data = json.load(sys.stdin)
print(json.dumps({"succeeded": True, "participant": data["participant"], "uid": os.getuid(),
                  "interfaces": sorted(os.listdir("/sys/class/net")),
                  "start": data["schedule"]["start"]}))
"""

SIMPLE = {
    "duration": 'json.load(sys.stdin); print(json.dumps({"duration": "PT2S"}))',
    "participant-data": 'json.load(sys.stdin); print(json.dumps({"uid": os.getuid()}))',
    "merged-results": 'd = json.load(sys.stdin); print(json.dumps({"succeeded": True, '
                      '"results": d["results"]}))',
}


@pytest.fixture
def public_root(monkeypatch):
    root = tempfile.mkdtemp(prefix="jumbo-harness-")
    os.chmod(root, 0o755)
    directory = os.path.join(root, "pscheduler-tool-standin", "standin")
    os.makedirs(directory)
    os.chmod(os.path.dirname(directory), 0o755)
    os.chmod(directory, 0o755)
    for method, body in SIMPLE.items():
        with open(os.path.join(directory, method), "w") as out:
            out.write("#!/usr/bin/env python3\nimport json, os, sys\n" + body + "\n")
    with open(os.path.join(directory, "run"), "w") as out:
        out.write(textwrap.dedent(RUN))
    for method in os.listdir(directory):
        os.chmod(os.path.join(directory, method), 0o755)
    monkeypatch.setattr(harness, "ROOT", root)
    yield root
    shutil.rmtree(root, ignore_errors=True)


@needs_lab
def test_two_participants_in_namespaces_as_jumbotest(lab_factory, public_root):
    probe = harness.run_program(["runuser", "-u", "jumbotest", "--",
                                 os.path.join(harness.interpreter_dir(), "python3"), "-V"],
                                timeout=30)
    if probe.status != 0:
        pytest.skip("jumbotest cannot run the interpreter under test")
    lab = lab_factory("clean-jumbo")
    places = [{"lab": lab, "node": "src", "user": "jumbotest"},
              {"netns": (lab, "dst"), "user": "jumbotest"}]
    run = harness.run_tool_participants("standin", {"dest": "dst"}, places, start_in=0)
    lead, other = run.merged["results"]
    uid = int(harness.run_program(["id", "-u", "jumbotest"]).stdout)
    assert lead["uid"] == other["uid"] == uid
    assert run.participant_data == [{"uid": uid}, {"uid": uid}]
    # Each ran in its own namespace: the lab's interface names differ per node.
    assert lead["interfaces"] != other["interfaces"]
    assert lead["start"] == other["start"]
