"""jumbo.archive.opensearch.changes: the requests that find the paths whose runs left their
latest state. Each path's key is written only for the clause that names it, a clause at a
time (718,800 keys at once were ~60 MB of the report's peak); every path of a group other
than the biggest is named exactly once, and the biggest is written as "none of the others"
while that fits one clause, else spelled out too."""

from jumbo.archive.opensearch import changes
from jumbo.archive.query_base import LatestState

STATES = {"jumbo": {"term": {"s": "jumbo"}}, "standard": {"term": {"s": "standard"}},
          "blackhole": {"term": {"s": "blackhole"}}}


def _groups(n_jumbo, n_standard, n_blackhole):
    groups = {}
    for state, n in (("jumbo", n_jumbo), ("standard", n_standard), ("blackhole", n_blackhole)):
        groups[state] = [LatestState("h%d" % i, "%s%d" % (state, i), 4 + 2 * (i % 2), state)
                         for i in range(n)]
    return groups


def _named(clause):
    found = []
    for part in clause["bool"].get("filter", []) + clause["bool"].get("must_not", []):
        found.extend(part.get("terms", {}).get("jumbo.path", []))
    return found


def test_few_others_name_the_biggest_group_by_what_it_is_not(monkeypatch):
    monkeypatch.setattr(changes, "TERMS_CHUNK", 4)
    groups = _groups(10, 3, 1)
    clauses = changes._clauses(groups, "jumbo", STATES)
    assert iter(clauses) is clauses        # a generator: one clause at a time
    clauses = list(clauses)
    assert len(clauses) == 3
    assert clauses[0]["bool"]["must_not"] == [STATES["standard"]]
    assert _named(clauses[0]) == ["h0|standard0|4|pmtu", "h1|standard1|6|pmtu", "h2|standard2|4|pmtu"]
    assert clauses[1]["bool"]["must_not"] == [STATES["blackhole"]]
    last = clauses[2]["bool"]
    assert "filter" not in last and last["must_not"][0] == STATES["jumbo"]
    assert sorted(_named(clauses[2])) == sorted(_named(clauses[0]) + _named(clauses[1]))


def test_many_others_spell_every_group_out_in_chunks(monkeypatch):
    monkeypatch.setattr(changes, "TERMS_CHUNK", 4)
    groups = _groups(9, 5, 2)
    clauses = list(changes._clauses(groups, "jumbo", STATES))
    named = [key for c in clauses for key in _named(c)]
    assert all(len(c["bool"]["filter"][0]["terms"]["jumbo.path"]) <= 4 for c in clauses)
    everyone = ["%s|%s|%s|pmtu" % (r.source, r.dest, r.ip_version)
                for rows in groups.values() for r in rows]
    assert sorted(named) == sorted(everyone)          # every path exactly once
    for c in clauses:                                 # each chunk excludes its own state
        state = c["bool"]["filter"][0]["terms"]["jumbo.path"][0].split("|")[1].rstrip("0123456789")
        assert c["bool"]["must_not"] == [STATES[state]]
