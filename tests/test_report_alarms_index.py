"""jumbo.report.alarms_index: jumbo-alarms --index stores each event once, as a document of the
store's own `jumbo_alarms` index, under a template the suite owns that matches only that name
(never perfSONAR's indices) with `dynamic: false`; a template of the same name it does not own
is left alone and nothing is indexed. Against a real OpenSearch (tests/opensearch_fixture.py;
OPENSEARCH_PORT picks the node)."""

import uuid

import pytest

from jumbo.archive.stores import open_store
from jumbo.report import alarms_index
from jumbo.report.errors import ReportError

from opensearch_fixture import drop_prefix


def _event(alarm_id, path_mtu=1500, to="2026-11-28T10:00:00Z"):
    return (alarm_id, {"category": "Network", "subcategory": "Jumbo", "event": "jumbo path regressed",
                       "body": "jumbo regressed on ps1.a -> ps1.b (IPv4)", "tags": ["SITE-A"],
                       "source": {"alarm_id": alarm_id, "from": "2026-11-27T10:00:00Z", "to": to,
                                  "src_host": "ps1.a", "dest_host": "ps1.b", "ipv": "IPv4",
                                  "path_mtu": path_mtu, "from_path_mtu": 9000,
                                  "unlisted_field": "kept in _source only"}})


def test_the_template_matches_only_its_own_index_and_fixes_the_mapping():
    body = alarms_index.template("pfx_jumbo_alarms")
    assert body["index_patterns"] == ["pfx_jumbo_alarms*"]
    assert body["version"] == alarms_index.TEMPLATE_VERSION == 2
    assert body["_meta"] == {"managed-by": "jumbo-alarms"}
    mapping = body["template"]["mappings"]
    assert mapping["dynamic"] is False and mapping["properties"]["source"]["dynamic"] is False
    fields = mapping["properties"]["source"]["properties"]
    assert fields["path_mtu"] == fields["from_path_mtu"] == fields["hop_mtu"] == {"type": "integer"}
    assert fields["alarm_id"] == {"type": "keyword"} and fields["to"] == {"type": "date"}
    assert mapping["properties"]["@timestamp"] == {"type": "date"}


@pytest.mark.parametrize("url", ["sqlite:////tmp/x.db", "opensearch.example:9200"])
def test_only_an_opensearch_store_takes_an_index(url):
    with pytest.raises(ReportError) as caught:
        alarms_index.index_events(url, {}, [_event("a1")], lambda alarm_id: None)
    assert str(caught.value) == "--index needs an OpenSearch store (http(s)://...)"


@pytest.fixture
def store_url(opensearch_url):
    prefix = "alidx%s_" % uuid.uuid4().hex[:8]
    url = "%s/?prefix=%s" % (opensearch_url, prefix)
    yield url
    drop_prefix(open_store(url), prefix)


def _documents(url):
    store = open_store(url)
    try:
        index = store.name(alarms_index.ALARMS_INDEX)
        store.request("POST", "/%s/_refresh" % index)
        status, found = store.request("POST", "/%s/_search" % index,
                                      {"query": {"match_all": {}}, "size": 100})
        assert status == 200, found
        return {hit["_id"]: hit["_source"] for hit in found["hits"]["hits"]}
    finally:
        store.close()


def test_each_event_is_stored_once_under_its_alarm_id(store_url):
    stored = []
    events = [_event("a1"), _event("a2", path_mtu=4000)]
    alarms_index.index_events(store_url, {}, events, stored.append)
    assert stored == ["a1", "a2"]
    docs = _documents(store_url)
    assert sorted(docs) == ["a1", "a2"]
    assert docs["a2"]["source"]["path_mtu"] == 4000
    assert docs["a1"]["@timestamp"] == "2026-11-28T10:00:00Z"
    # Again (a run that failed after storing them): a 409 each, still reported stored, and
    # the first document kept.
    again = []
    alarms_index.index_events(store_url, {}, [_event("a1", path_mtu=1280)], again.append)
    assert again == ["a1"] and _documents(store_url)["a1"]["source"]["path_mtu"] == 1500
    # An unlisted field is kept but not searchable (dynamic: false).
    store = open_store(store_url)
    try:
        index = store.name(alarms_index.ALARMS_INDEX)
        status, found = store.request("POST", "/%s/_search" % index, {"query": {"term": {
            "source.unlisted_field": "kept in _source only"}}})
        assert status == 200 and found["hits"]["hits"] == []
        status, found = store.request("POST", "/%s/_search" % index, {"query": {"term": {
            "source.path_mtu": 4000}}})
        assert [h["_id"] for h in found["hits"]["hits"]] == ["a2"]
    finally:
        store.close()


def test_a_template_of_the_same_name_not_ours_is_left_alone(store_url):
    store = open_store(store_url)
    try:
        index = store.name(alarms_index.ALARMS_INDEX)
        theirs = {"index_patterns": [index + "*"], "priority": 5,
                  "template": {"mappings": {"properties": {"x": {"type": "keyword"}}}},
                  "_meta": {"owner": "someone else"}}
        assert store.request("PUT", "/_index_template/" + index, theirs)[0] == 200
        stored = []
        with pytest.raises(ReportError) as caught:
            alarms_index.index_events(store_url, {}, [_event("a1")], stored.append)
        assert "exists that jumbo-alarms does not own; left alone, nothing indexed" in str(
            caught.value)
        assert stored == []
        status, found = store.request("GET", "/_index_template/" + index)
        assert found["index_templates"][0]["index_template"]["_meta"] == {"owner": "someone else"}
        assert store.request("HEAD", "/" + index)[0] == 404
    finally:
        store.close()


def test_an_index_made_under_the_first_template_gets_the_fields_added_since(store_url):
    store = open_store(store_url)
    try:
        index = store.name(alarms_index.ALARMS_INDEX)
        old = {"dynamic": False, "_meta": {"managed-by": "jumbo-alarms", "version": 1},
               "properties": {"source": {"dynamic": False, "properties": {
                   "alarm_id": {"type": "keyword"}}}}}
        first = dict(alarms_index.template(index), version=1, template={"mappings": old})
        assert store.request("PUT", "/_index_template/" + index, first)[0] == 200
        assert store.request("PUT", "/" + index, {"mappings": old})[0] == 200
        alarms_index.index_events(store_url, {}, [_event("a1")], lambda alarm_id: None)
        status, template = store.request("GET", "/_index_template/" + index)
        assert template["index_templates"][0]["index_template"]["version"] == 2
        status, mapping = store.request("GET", "/%s/_mapping" % index)
        fields = mapping[index]["mappings"]["properties"]["source"]["properties"]
        assert fields["path_mtu"] == {"type": "integer"}
        status, found = store.request("POST", "/%s/_search" % index, {"query": {"term": {
            "source.path_mtu": 1500}}})
        assert [h["_id"] for h in found["hits"]["hits"]] == ["a1"]
    finally:
        store.close()


def test_a_store_that_fails_says_how_many_are_owed():
    # Nothing listens on port 1 of loopback: the store cannot be reached at all.
    with pytest.raises(ReportError) as caught:
        alarms_index.index_events("http://127.0.0.1:1/?prefix=x_", {"timeout": 2},
                                  [_event("a1"), _event("a2")], lambda alarm_id: None)
    assert caught.value.status == 3
    assert str(caught.value).endswith("(0 of 2 event(s) indexed; the others are kept in --state "
                                      "and indexed by the next run)")
