"""jumbo.archive.opensearch.install / install_state: the set-up resumes (issue
32, row 1). On a real OpenSearch, through a relay that logs every request: what is in place
is read in one request, and a try cut short leaves progress the next one builds on (the same
across killed `archive` processes: tests/test_archive_opensearch_self_setup.py).
"""

import uuid

from jumbo.archive.errors import TransientError
from jumbo.archive.opensearch import ready
from jumbo.archive.opensearch.install import install, problems
from jumbo.archive.stores import open_store
from opensearch_fixture import drop_prefix
from relay_proxy import RelayProxy, json_answer

WRITES = ("PUT", "POST", "DELETE")
# Fresh: 5 templates, 2 streams, 3 indices; the copy of earlier records: a scroll and its end.
FRESH_WRITES = 10


class LoggingRelay(RelayProxy):
    """Logs (method, path) of every request; from request `fail_after` on (if set) answers
    503, as an archive that went away; refuses the cluster state when `no_cluster_state`."""

    def __init__(self, upstream, fail_after=None, no_cluster_state=False):
        RelayProxy.__init__(self, upstream)
        self.log = []
        self.fail_after = fail_after
        self.no_cluster_state = no_cluster_state

    def intercept(self, method, path, headers, length):
        self.log.append((method, path))
        if self.fail_after is not None and len(self.log) > self.fail_after:
            return json_answer(503, {"error": "gone", "status": 503})
        if self.no_cluster_state and path.startswith("/_cluster/state"):
            return json_answer(403, {"error": "no permissions for [cluster:monitor/state]",
                                     "status": 403})
        return None


def _store(url, prefix):
    return open_store("%s/?prefix=%s" % (url, prefix))


def _writes(log):
    """The requests that change the archive (the copy's scroll search is a POST: left out)."""
    return [(m, p) for m, p in log if m in WRITES and "_search" not in p]


def test_an_install_cut_short_is_resumed_and_redoes_nothing(opensearch_url, tmp_path):
    prefix = "r%s_" % uuid.uuid4().hex[:8]
    progress = ready.Progress(str(tmp_path))     # any digest: this test's own
    cut = LoggingRelay(opensearch_url, fail_after=5)
    whole = LoggingRelay(opensearch_url)
    direct = _store(opensearch_url, prefix)
    try:
        first = _store(cut.url, prefix)
        try:
            install(first, progress)
            raise AssertionError("an install through a relay failing after 5 requests ended")
        except TransientError:
            pass
        finally:
            first.close()
        done_first = _writes(cut.log[:5])
        assert cut.log[0][1].startswith("/_cluster/state/metadata?"), cut.log   # one read
        assert len(done_first) == 4, cut.log
        again = _store(whole.url, prefix)
        try:
            install(again, progress)
            done_second = _writes(whole.log)
            # Nothing done twice, everything done once.
            assert not set(done_first) & set(done_second), (done_first, done_second)
            assert len(done_first) + len(_writes(whole.log)) == FRESH_WRITES, whole.log
            # Done: a third try reads once and writes nothing (the copy noted as done).
            whole.log[:] = []
            assert install(again, progress) == []
            assert len(whole.log) == 1 and whole.log[0][0] == "GET", whole.log
        finally:
            again.close()
        assert problems(direct, quick=False) == []
    finally:
        cut.close()
        whole.close()
        drop_prefix(direct, prefix)


def test_without_the_cluster_state_the_set_up_is_read_in_two_requests(opensearch_url,
                                                                        tmp_path):
    from jumbo.archive.opensearch import install_state   # new with the resumable install
    prefix = "c%s_" % uuid.uuid4().hex[:8]
    progress = ready.Progress(str(tmp_path))
    relay = LoggingRelay(opensearch_url, no_cluster_state=True)
    direct = _store(opensearch_url, prefix)
    store = _store(relay.url, prefix)
    try:
        install(store, progress)
        assert len(_writes(relay.log)) == FRESH_WRITES, relay.log
        relay.log[:] = []
        assert install(store, progress) == []
        # The refused state read, then templates and mappings: no write.
        assert [m for m, _ in relay.log] == ["GET", "GET", "GET"], relay.log
        # And the read apart says the same as the cluster state.
        apart, whole = install_state.read(store), install_state.read(direct)
        assert apart.templates == whole.templates and apart.indices == whole.indices
        assert apart.streams == whole.streams and len(whole.streams) == 2
        assert all(whole.current(index) for names in whole.streams.values() for index in names)
    finally:
        store.close()
        relay.close()
        drop_prefix(direct, prefix)
