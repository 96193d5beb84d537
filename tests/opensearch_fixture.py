"""The session-scoped `opensearch_url` fixture: a real OpenSearch 2.18.0 (scripts/opensearch.sh).

Started once per test session when not already running (and then stopped at the end);
tests that use it skip only when Java 17 is absent. Also `OpenSearchNode`, for tests that
need their own node to stop and restart (fault injection).
"""

import os
import subprocess
import urllib.request

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "scripts", "opensearch.sh")
JAVA = "/usr/lib/jvm/java-17-openjdk-amd64/bin/java"


def java_available():
    return os.access(JAVA, os.X_OK)


class OpenSearchNode(object):
    """One node on `port`, driven through scripts/opensearch.sh."""

    def __init__(self, port):
        self.port = port
        self.url = "http://127.0.0.1:%d" % port

    def _script(self, action, timeout=180):
        env = dict(os.environ, OPENSEARCH_PORT=str(self.port))
        proc = subprocess.run(["bash", SCRIPT, action], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, universal_newlines=True, timeout=timeout)
        return proc.returncode, proc.stdout

    def running(self):
        try:
            urllib.request.urlopen(self.url, timeout=2).read()
            return True
        except Exception:  # noqa: BLE001 - any failure means the node is not up yet
            return False

    def start(self):
        status, output = self._script("start")
        if status != 0:
            raise RuntimeError("OpenSearch on port %d did not start:\n%s" % (self.port, output))

    def stop(self):
        self._script("stop", timeout=60)


@pytest.fixture(scope="session")
def opensearch_url():
    if not java_available():
        pytest.skip("Java 17 is not installed (%s): no OpenSearch" % JAVA)
    node = OpenSearchNode(int(os.environ.get("OPENSEARCH_PORT", "9250")))
    started_here = False
    if not node.running():
        node.start()
        started_here = True
    yield node.url
    if started_here:
        node.stop()


def drop_prefix(store, prefix):
    """Remove everything a test wrote under its index prefix (data streams, indices, templates)
    and close the store: the shared test node stays clean between tests."""
    store.request("DELETE", "/_data_stream/%s*" % prefix)
    store.request("DELETE", "/%s*" % prefix)
    for name, _ in store.templates():
        store.request("DELETE", "/_index_template/" + name)
    store.close()
