"""The fixture (re-exported by conftest.py) of the suite under a real upstream pScheduler of
the 5.3 development line: two nodes built from the issue-1526 snapshot by
lab/real_pscheduler/node53.sh in namespaces rp3-a, rp3-r1, rp3-b (beside nodes.sh's 5.2.5
lab, which uses rps-*), built once per session, torn down at its end.

Source: PSCHEDULER_SRC as for the 5.2.5 lab (the directory holding
pscheduler-5.3dev-issue1526-*.tar.gz). Work directory: RPS53 (default /srv/j53).
NODE53_REUSE=1 keeps a lab that is already up (and leaves it up): for working on the tests.
"""

import glob
import os
import subprocess

import pytest

from real_pscheduler import DEFAULT_SRC, ROOT, Nodes, in_ci

NODE53 = os.path.join(ROOT, "lab", "real_pscheduler", "node53.sh")
NETNS53 = {"a": "rp3-a", "b": "rp3-b"}
WHERE_TO_GET_53 = (
    "the 5.3-development pScheduler source is missing: set PSCHEDULER_SRC to a directory "
    "holding pscheduler-5.3dev-issue1526-4422852.tar.gz (github.com/perfsonar/pscheduler "
    "branch issue-1526 at 4422852); default %s" % DEFAULT_SRC)


def _lab_is_up():
    names = subprocess.run(["ip", "netns", "list"], stdout=subprocess.PIPE,
                           universal_newlines=True).stdout.split()
    return NETNS53["a"] in names


@pytest.fixture(scope="session")
def nodes53():
    src = os.environ.get("PSCHEDULER_SRC", DEFAULT_SRC)
    if not glob.glob(os.path.join(src, "pscheduler-5.3dev-*.tar.gz")):
        if in_ci():
            pytest.fail("CI: " + WHERE_TO_GET_53, pytrace=False)
        pytest.skip(WHERE_TO_GET_53)
    if os.geteuid() != 0:
        pytest.skip("the real pScheduler lab needs root (namespaces, PostgreSQL clusters)")
    env = dict(os.environ, PSCHEDULER_SRC=src, RPS=os.environ.get("RPS53", "/srv/j53"))
    if os.environ.get("NODE53_REUSE") and _lab_is_up():
        yield Nodes(env, NODE53, NETNS53)
        return
    down = ["bash", NODE53, "down"]
    up = subprocess.run(["bash", NODE53, "up"], env=env, stdout=subprocess.PIPE,
                        stderr=subprocess.STDOUT, universal_newlines=True, timeout=900)
    if up.returncode != 0:
        subprocess.run(down, env=env, timeout=300)
        pytest.fail("the 5.3-dev pScheduler lab did not come up:\n" + up.stdout, pytrace=False)
    try:
        yield Nodes(env, NODE53, NETNS53)
    finally:
        subprocess.run(down, env=env, timeout=300)
