"""Shared fixtures: the repository layout, and the namespace lab for tests that need root."""

import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for path in (ROOT, os.path.join(ROOT, "python-jumbo")):
    if path not in sys.path:
        sys.path.insert(0, path)

# No reverse DNS from jumbo-report in tests, in-process or in a child (no DNS here: every
# lookup would wait out the budget); tests that resolve give a resolver they control.
os.environ["JUMBO_NO_RESOLVE"] = "1"

# A real OpenSearch for the archive store tests (session-scoped; see tests/opensearch_fixture.py).
from opensearch_fixture import opensearch_url  # noqa: E402,F401 - a fixture pytest finds by name, after sys.path is set above


@pytest.fixture
def lab_factory():
    """Build labs from scenarios; every lab is torn down after the test, pass or fail."""
    from lab import Lab, scenarios
    built = []

    def build(scenario, **kwargs):
        topology = scenarios.get(scenario) if isinstance(scenario, str) else scenario
        lab = Lab(topology, **kwargs).build()
        built.append(lab)
        return lab

    yield build
    for lab in built:
        lab.destroy()


# Issue 23: SQLite stores live only in the directories the node's limits allow
# (jumbo.core.limits). The tests keep theirs in pytest's scratch directories (and the demo's in
# var/): allow those, for the archiver processes the tests start too.
def _allow_scratch_stores():
    import tempfile
    extra = [tempfile.gettempdir(), os.path.join(ROOT, "var")]
    current = os.environ.get("JUMBO_SQLITE_DIRS")
    os.environ["JUMBO_SQLITE_DIRS"] = ":".join(([current] if current else []) + extra)


_allow_scratch_stores()


@pytest.fixture
def sqlite_policy(tmp_path, monkeypatch):
    """The node's limits as in production, not the tests' scratch allowance above: SQLite
    stores only under tmp_path/allowed, which is returned (the default store lives there)."""
    import json
    from jumbo.core import limits
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    conf = tmp_path / "jumbo-limits.conf"
    conf.write_text(json.dumps({"sqlite-directories": [str(allowed)]}))
    monkeypatch.setenv(limits.LIMITS_ENV, str(conf))
    monkeypatch.delenv(limits.SQLITE_DIRS_ENV, raising=False)
    monkeypatch.setenv("JUMBO_DEFAULT_STORE", "sqlite:///%s/default.db" % allowed)
    return allowed


# Issue 32: the archiver notes OpenSearch archives found set up (jumbo.archive.opensearch.ready)
# in JUMBO_CACHE_DIR, default /var/lib/jumbo. The tests' notes go to a scratch directory of
# this session (the archiver processes they start inherit it), never the host's.
def _private_ready_notes():
    import tempfile
    if not os.environ.get("JUMBO_CACHE_DIR"):
        os.environ["JUMBO_CACHE_DIR"] = tempfile.mkdtemp(prefix="jumbo-ready-notes-")


_private_ready_notes()


# CI runs the real-pScheduler integration suite first (tests/integration/). Said here rather
# than left to the directory order, which the campaign folders (fuzz/, golden/, hardening/)
# would otherwise come before.
def pytest_collection_modifyitems(session, config, items):
    integration = os.path.join(ROOT, "tests", "integration") + os.sep
    items.sort(key=lambda item: not str(item.path).startswith(integration))
