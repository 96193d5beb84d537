"""The OpenSearch layout this suite owns beside perfSONAR's archive: index, stream and
template names, their mappings, the templates `setup install` puts in place, and the packed
fields of the latest-per-path index (see jumbo.archive.opensearch.store for what each holds).

`prefix` (from the store URL) is prepended to every index, data stream, template and alias
name; production leaves it empty.
"""

import base64
import json

# Bump when a template or index mapping below changes: `setup install` then
# replaces the templates and rolls the owned streams over. (5: the record's blackhole_flows;
# 6: its flows_asked.)
TEMPLATE_VERSION = 6

# pScheduler test types whose `pscheduler_<type>` stream this suite owns. The
# paired-throughput test's stream is added here (and, if its result fields are to
# be typed, in RESULT_MAPPINGS); nothing else needs to change.
OWNED_TEST_TYPES = ("pmtu", "jumbo-throughput")

HISTORY_INDEX = "jumbo_history"
LATEST_INDEX = "jumbo_latest"
REJECTED_INDEX = "jumbo_rejected"
JUMBO_INDICES = (HISTORY_INDEX, LATEST_INDEX, REJECTED_INDEX)
# Templates of earlier versions of this store that matched perfSONAR's streams:
# `setup install` removes them (they are ours; perfSONAR's template then applies again).
LEGACY_TEMPLATES = ("jumbo_pscheduler_other",)
MANAGED_BY = "jumbo archiver"

WRITER_ROLE = "jumbo_writer"
SETUP_COMMAND = "python3 -m jumbo.archive.opensearch.setup install --url 'https://ADMIN:PASSWORD@ARCHIVE:9200'"
CHECK_COMMAND = "python3 -m jumbo.archive.opensearch.setup check --url 'https://WRITER:PASSWORD@ARCHIVE:9200'"

KEYWORD = {"type": "keyword"}
INTEGER = {"type": "integer"}
FLOAT = {"type": "float"}
DOUBLE = {"type": "double"}
BOOLEAN = {"type": "boolean"}
DATE = {"type": "date"}
IP = {"type": "ip"}
TEXT = {"type": "text"}
NOT_INDEXED = {"type": "object", "enabled": False}

JUMBO_PROPERTIES = {
    "id": KEYWORD, "run_href": KEYWORD, "task_href": KEYWORD, "test_type": KEYWORD,
    "tool": KEYWORD, "start": DATE, "source": KEYWORD, "dest": KEYWORD,
    "source_ip": IP, "dest_ip": IP, "source_site": KEYWORD, "dest_site": KEYWORD,
    "ip_version": INTEGER, "succeeded": BOOLEAN, "error": TEXT,
    "path_mtu": INTEGER, "local_mtu": INTEGER, "target_mtu": INTEGER, "jumbo": BOOLEAN,
    "pmtud": KEYWORD, "partial": BOOLEAN, "blackhole_ttl": INTEGER, "blackhole_ip": IP,
    "blackhole_size": INTEGER, "reverse_path_mtu": INTEGER, "reverse_pmtud": KEYWORD,
    # Hops are kept in _source, not indexed (the report reads blackhole_* for locations).
    "hops": NOT_INDEXED,
    "flows": INTEGER, "flows_asked": INTEGER, "blackhole_flows": INTEGER,
    "throughput_standard": DOUBLE, "throughput_jumbo": DOUBLE,
    "gain": DOUBLE, "mss": INTEGER, "rtt": DOUBLE, "loss": DOUBLE, "path": KEYWORD,
}
JUMBO_MAPPING = {"dynamic": False, "properties": JUMBO_PROPERTIES}

# perfSONAR's dynamic templates (perfsonar/archive index_template-pscheduler.json),
# repeated because composable templates do not merge.
DYNAMIC_TEMPLATES = [
    {"ip_addresses": {"match": "ip", "mapping": {"type": "ip"}}},
    {"histograms": {"match": "histogram", "mapping": {"type": "object", "enabled": False}}},
    {"json_unparsed": {"match": "json", "mapping": {"type": "object", "enabled": False}}},
    {"location": {"path_match": "*.geo.location", "mapping": {"type": "geo_point"}}},
]

# The pmtu result as the test writes it (both routes store it verbatim).
PMTU_RESULT = {
    "succeeded": BOOLEAN, "path-mtu": INTEGER, "local-mtu": INTEGER,
    "target-mtu": INTEGER, "reverse-path-mtu": INTEGER, "jumbo": BOOLEAN,
    "pmtud": KEYWORD, "reverse-pmtud": KEYWORD, "method": KEYWORD, "ip-version": INTEGER,
    "dest-ip": IP, "probes": INTEGER, "elapsed": FLOAT, "error": TEXT,
    "diags": {"type": "text", "index": False},
    "hops": NOT_INDEXED, "flows": NOT_INDEXED, "ptb": NOT_INDEXED,
    "throughput": {"type": "object", "dynamic": False, "properties": {"gain": DOUBLE}},
    "blackhole": {"properties": {"ttl": INTEGER, "ip": IP, "size": INTEGER}},
}
# Typed result fields per owned test type; a type not listed gets perfSONAR's
# dynamic mapping for its result (as Logstash-created streams have).
# The paired test's verdict and per-leg figures; its runs/intervals stay unindexed.
PAIR_RESULT = {
    "succeeded": BOOLEAN, "path-mtu": INTEGER, "local-mtu": INTEGER, "pmtud": KEYWORD,
    "ip-version": INTEGER, "dest-ip": IP, "error": TEXT, "verdict": KEYWORD, "gain": DOUBLE,
    "gain-noise": DOUBLE, "jumbo-mtu": INTEGER, "diags": {"type": "text", "index": False},
    "runs": NOT_INDEXED, "mathis": NOT_INDEXED, "server": NOT_INDEXED,
}
RESULT_MAPPINGS = {"pmtu": PMTU_RESULT, "jumbo-throughput": PAIR_RESULT}


def stream_mapping(test_type):
    """Mappings of an owned stream: only `result` (and the time field) pinned; the
    common fields stay dynamic, as in perfSONAR's streams, so perfSONAR's own
    dashboards (which group on e.g. `pscheduler.tool.keyword`) keep working over them."""
    properties = {"@timestamp": DATE}
    if test_type in RESULT_MAPPINGS:
        properties["result"] = {"properties": RESULT_MAPPINGS[test_type]}
    return {"_meta": {"managed-by": MANAGED_BY, "version": TEMPLATE_VERSION},
            "dynamic_templates": DYNAMIC_TEMPLATES, "properties": properties}


# Two fields of each jumbo_latest document pack record fields as one JSON array (UTF-8) in
# one binary doc value (base64 in the document, as OpenSearch takes binary values):
#   row_v1     the fields the report reads for every path;
#   locate_v1  the addresses, black hole and hops it reads where it localises a failure.
# The report reads ~180,000 latest documents of a 300-host mesh: 13 doc-value fields per hit
# cost ~4x one field (each is looked up and serialised apart: 1.0 s against 0.25 s for the
# 67,800 pmtu paths that need no localisation, at 5M), a keyword doc value of unique ~200-byte
# rows ~2.5x a binary one (its term dictionary is decompressed at every lookup), and whole
# _source documents with their hops ~3x the packed fields. A different layout is a new field
# (row_v2), never a change of these: a report reads the fields it knows, and the documents
# without them from _source.
LATEST_ROW = "row_v1"
LATEST_ROW_FIELDS = (
    "source", "dest", "ip_version", "source_site", "dest_site", "start", "succeeded",
    "path_mtu", "local_mtu", "pmtud", "partial", "reverse_path_mtu", "reverse_pmtud",
    "rtt", "loss", "gain", "throughput_standard", "throughput_jumbo")
LATEST_LOCATE = "locate_v1"
LATEST_LOCATE_FIELDS = ("source_ip", "dest_ip", "blackhole_ttl", "blackhole_ip",
                        "blackhole_size", "hops")
# (field, the record fields it packs), in the order a reader joins their values.
LATEST_PACKS = ((LATEST_ROW, LATEST_ROW_FIELDS), (LATEST_LOCATE, LATEST_LOCATE_FIELDS))
PACKED = {"type": "binary", "doc_values": True}

INDEX_MAPPINGS = {
    HISTORY_INDEX: {"dynamic": False, "properties": {
        "@timestamp": DATE, "jumbo": JUMBO_MAPPING, "raw": NOT_INDEXED}},
    LATEST_INDEX: {"dynamic": False, "properties": dict(
        JUMBO_PROPERTIES, **{"@timestamp": DATE}, **{field: PACKED for field, _ in LATEST_PACKS})},
    REJECTED_INDEX: {"dynamic": False, "properties": {
        "@timestamp": DATE, "run_id": KEYWORD, "run_href": KEYWORD, "record_id": KEYWORD,
        "stream": KEYWORD, "field": KEYWORD, "reason": TEXT, "test_type": KEYWORD}},
}
for _mapping in INDEX_MAPPINGS.values():
    _mapping["_meta"] = {"managed-by": MANAGED_BY, "version": TEMPLATE_VERSION}


compact_json = json.JSONEncoder(separators=(",", ":")).encode


def latest_document(rec, key):
    """The jumbo_latest document of adoption record `rec` (path `key`)."""
    body = dict(rec)
    body["path"] = key
    body["@timestamp"] = rec["start"]
    for field, names in LATEST_PACKS:
        packed = compact_json([rec.get(name) for name in names]).encode("utf-8")
        body[field] = base64.b64encode(packed).decode("ascii")
    return body


def _name(prefix, base):
    return prefix + base


def stream_name(prefix, test_type):
    """The pscheduler_<type> data stream of a test type."""
    return prefix + "pscheduler_" + test_type


def templates(prefix=""):
    """(name, body) of every index template the store owns (installed by setup), its
    names after `prefix`."""
    for ptype in OWNED_TEST_TYPES:
        yield _name(prefix, "jumbo_pscheduler_" + ptype), {
            "index_patterns": [stream_name(prefix, ptype)],
            # perfSONAR's pscheduler_* is priority 0; two templates matching one name
            # need different priorities, and ours matches only our own stream.
            "priority": 1,
            "version": TEMPLATE_VERSION,
            "data_stream": {},
            "template": {
                # refresh every 5 s (not 1 s): a run is searchable seconds later, and
                # a burst is indexed at a fraction of the cost
                "settings": {"number_of_shards": 1, "number_of_replicas": 0,
                             "refresh_interval": "5s"},
                "aliases": {_name(prefix, "pscheduler"): {}},
                "mappings": stream_mapping(ptype),
            },
            "_meta": {"managed-by": MANAGED_BY},
        }
    for index in JUMBO_INDICES:
        # Exact-name templates: if an index is deleted, a write re-creates it typed.
        yield _name(prefix, index), {
            "index_patterns": [_name(prefix, index)],
            "priority": 1,
            "version": TEMPLATE_VERSION,
            "template": {
                "settings": {"number_of_shards": 1, "number_of_replicas": 0,
                             "refresh_interval": "5s"},
                "mappings": INDEX_MAPPINGS[index],
            },
            "_meta": {"managed-by": MANAGED_BY},
        }
