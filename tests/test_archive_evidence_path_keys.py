"""jumbo.archive.evidence.path_key, as the history's readers use it: the key a store's
reader writes for a path matches the key the archive stored for it (a missing name or IP
version is "", never "None"). The history's changes are found by that key. With "None" in
the key, a path recorded without an IP version was re-read as a candidate though it never
changed (both stores: the reads of MAX_CHANGED_HISTORY paths are spent on it), and on
OpenSearch, once the commonest latest state is spelled out key by key (a mesh of more than
TERMS_CHUNK other paths), its change was missed."""

import copy

import pytest

from fixtures import synth
from jumbo.archive.opensearch import changes as opensearch_changes
from jumbo.archive.queries import open_queries
from jumbo.archive.query_base import Window, latest_states
from jumbo.archive.sqlite.reader import SqliteQueries
from store_fixtures import both_stores

TARGET = 9000
# an `until` makes SQLite take the latest states from the report, as OpenSearch always does
WINDOW = Window(None, "2026-12-01T00:00:00Z")
CHANGED = ("ps0.site-a.example", "ps1.site-a.example")


def _records():
    base = next(r for r in synth.Mesh.small().records(extras=False)
                if r["path_mtu"] == 9000 and r["succeeded"] and not r.get("partial")
                and r.get("pmtud") not in ("blackhole", "unknown"))

    def result(n, start, mtu, **names):
        r = copy.deepcopy(base)
        r.update(dest_ip=None, id="r%d" % n, start=start, path_mtu=mtu, **names)
        return r

    # six jumbo paths, each measured once: jumbo is the biggest latest state
    records = [result(i, "2026-11-02T00:00:%02dZ" % i, 9000, dest="jumbo%d.example" % i)
               for i in range(6)]
    # a path without an IP version: standard, then jumbo (in the biggest group)
    records += [result(10, "2026-11-02T01:00:00Z", 1500, source=CHANGED[0], dest=CHANGED[1],
                       ip_version=None),
                result(11, "2026-11-03T01:00:00Z", 9000, source=CHANGED[0], dest=CHANGED[1],
                       ip_version=None)]
    # two paths that stay standard, one of them without an IP version
    for n, (dest, ip_version) in enumerate((("steady.example", 4), ("steady6.example", None))):
        records += [result(20 + 2 * n + i, "2026-11-0%dT02:00:00Z" % (2 + i), 1500, dest=dest,
                           ip_version=ip_version) for i in range(2)]
    return records


sqlite_url, os_url, store_url = both_stores(_records, "pathkeys")


def _candidates_seen(url, monkeypatch):
    """Every path the store re-reads the history of (its candidates for a change)."""
    seen = []
    if url.startswith("sqlite"):
        real = SqliteQueries._changes

        def spy(self, window, target, limit, flap, candidates, pathcol):
            seen.extend(candidates)
            return real(self, window, target, limit, flap, candidates, pathcol)
        monkeypatch.setattr(SqliteQueries, "_changes", spy)
    else:
        real = opensearch_changes._candidates

        def spy(*args):
            found = real(*args)
            seen.extend(found)
            return found
        monkeypatch.setattr(opensearch_changes, "_candidates", spy)
    return seen


def _history(url):
    queries = open_queries(url)
    try:
        latest = latest_states(queries.latest(WINDOW, TARGET), TARGET)
        states = sorted(s.result_state for s in latest)
        assert states.count("jumbo") == 7 and states.count("standard") == 2, states
        return queries.history(WINDOW, TARGET, "day", 100, 3, latest)[1]
    finally:
        queries.close()


@pytest.mark.parametrize("chunk", [60000, 1], ids=["biggest-by-exclusion", "biggest-spelled-out"])
def test_only_the_changed_path_is_reread_and_its_change_found(store_url, chunk, monkeypatch):
    monkeypatch.setattr(opensearch_changes, "TERMS_CHUNK", chunk)
    seen = _candidates_seen(store_url, monkeypatch)
    changes = _history(store_url)
    found = [(c["source"], c["dest"], c["ip_version"], c["from"], c["to"])
             for c in changes["changes"]]
    assert found == [CHANGED + (None, "standard", "jumbo")]
    assert changes["changed_paths"] == 1
    assert seen == ["%s|%s||pmtu" % CHANGED]
