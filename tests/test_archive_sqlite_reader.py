"""jumbo.archive.sqlite.reader: the latest rows the report reads, on a store of the synthetic
mesh whose truth is known (fixtures.synth): one per directed path, and the stored hops kept
exactly where the report reads them (a path that does not carry the target), whether SQLite
decides that (path_state's rule as SQL) or Python does (a store lacking a rule column)."""

import pytest

from fixtures import synth
from jumbo.archive import path_state
from jumbo.archive.query_base import Window
from jumbo.archive.sqlite.reader import SqliteQueries
from store_fixtures import load

MESH = synth.Mesh.small()
TARGET = 9000


@pytest.fixture(scope="module")
def url(tmp_path_factory):
    url = "sqlite:///%s" % (tmp_path_factory.mktemp("reader") / "mesh.db")
    load(url, MESH.records(extras=False))
    return url


def _latest(url, decided, monkeypatch):
    queries = SqliteQueries(url)
    try:
        with monkeypatch.context() as patch:
            if not decided:     # as on a store without every column the rule reads
                patch.setattr(SqliteQueries, "_rule_columns", property(lambda self: False))
            return list(queries.latest(Window(), TARGET))
    finally:
        queries.close()


@pytest.mark.parametrize("decided", [True, False], ids=["sqlite-decides", "python-decides"])
def test_hops_are_kept_only_where_the_path_does_not_carry_the_target(url, decided, monkeypatch):
    rows = _latest(url, decided, monkeypatch)
    assert len(rows) == len(list(MESH.pairs()))            # one per directed path
    states = {}
    for row in rows:
        state = path_state.state_of(row, TARGET)
        states[state] = states.get(state, 0) + 1
        truth = MESH.truth(MESH.by_name[row.source], MESH.by_name[row.dest])
        if state == "jumbo":
            assert row.hops is None, row
        else:
            assert row.hops and '"ttl"' in row.hops, row     # JSON text, as stored
            assert row.path_mtu == truth["path_mtu"]
    # the mesh holds both kinds, so neither branch is vacuous
    assert states.get("jumbo") and len(states) > 1, states


def test_both_ways_of_deciding_give_the_same_rows(url, monkeypatch):
    assert _latest(url, True, monkeypatch) == _latest(url, False, monkeypatch)
