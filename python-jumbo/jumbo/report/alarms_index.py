"""jumbo-alarms --index: the events as documents of the OpenSearch store's own `jumbo_alarms`
index, under an index template the suite owns and that matches only its own name
(`<prefix>jumbo_alarms*`, never perfSONAR's indices): an explicit mapping (`dynamic: false`:
a field not listed is kept in _source, not indexed, so no event can change the mapping).

A document is created under its alarm_id (`_create`): a 409 is the same alarm already stored
(a run that failed after storing it), so indexing is exactly once (alarm_state.py).
"""

from ..archive.errors import StoreError
from ..archive.stores import open_store
from .errors import ReportError

ALARMS_INDEX = "jumbo_alarms"
TEMPLATE_VERSION = 2      # 2: the MTUs before and now, both directions, and the hop's MTU
MANAGED_BY = "jumbo-alarms"

_K = {"type": "keyword"}
_DATE = {"type": "date"}
_INT = {"type": "integer"}
_FLOAT = {"type": "double"}
MAPPING = {
    "dynamic": False,
    "_meta": {"managed-by": MANAGED_BY, "version": TEMPLATE_VERSION},
    "properties": {
        "@timestamp": _DATE, "category": _K, "subcategory": _K, "event": _K,
        "body": {"type": "text"}, "tags": _K,
        "source": {"dynamic": False, "properties": {
            "alarm_id": _K, "from": _DATE, "to": _DATE, "ipv": _K, "ipv6": {"type": "boolean"},
            "src_host": _K, "dest_host": _K, "src_site": _K, "dest_site": _K, "site": _K,
            "from_state": _K, "to_state": _K, "changed_at": _DATE, "path_mtu": _INT,
            "reverse_path_mtu": _INT, "from_path_mtu": _INT, "from_reverse_path_mtu": _INT,
            "hop_ip": _K, "hop_ttl": _INT, "hop_mtu": _INT, "size": _INT, "sites": _K, "src_sites": _K,
            "dest_sites": _K, "num_pairs": _INT, "num_paths": _INT, "pairs": _K,
            "basis": _K, "baseline": _FLOAT, "recent": _FLOAT, "change": _FLOAT}},
    },
}


def template(index):
    return {"index_patterns": [index + "*"], "priority": 1, "version": TEMPLATE_VERSION,
            "template": {"settings": {"number_of_shards": 1, "number_of_replicas": 0},
                         "mappings": MAPPING},
            "_meta": {"managed-by": MANAGED_BY}}


def _ensure_template(store, index):
    """Our template, installed or brought up to date; one of the same name that is not ours
    is left alone (and refused: the documents would take a mapping the suite does not own)."""
    status, parsed = store.request("GET", "/_index_template/" + index)
    if status == 200:
        found = (parsed or {}).get("index_templates") or [{}]
        body = found[0].get("index_template") or {}
        if (body.get("_meta") or {}).get("managed-by") != MANAGED_BY:
            raise ReportError("--index: an index template %s exists that jumbo-alarms does not own; "
                              "left alone, nothing indexed" % index)
        if body.get("version") == TEMPLATE_VERSION:
            return
    elif status != 404:
        store.check(status, parsed, "--index: reading the index template %s" % index)
    status, parsed = store.request("PUT", "/_index_template/" + index, template(index))
    store.check(status, parsed, "--index: installing the index template %s" % index)
    # An index made under an older version of the template gets the fields added since
    # (a mapping only grows; fields not in it would be kept but never searchable).
    status, parsed = store.request("HEAD", "/" + index)
    if status == 200:
        status, parsed = store.request("PUT", "/%s/_mapping" % index,
                                       {"properties": MAPPING["properties"]})
        store.check(status, parsed, "--index: bringing the mapping of %s up to date" % index)


def index_events(store_url, store_options, events, stored):
    """Create each of `events` (alarm_id -> event) in the store's jumbo_alarms index, calling
    `stored(alarm_id)` after each one that is there. A failure is a ReportError (status 3)
    naming how many are still owed."""
    if not store_url.startswith(("http://", "https://")):
        raise ReportError("--index needs an OpenSearch store (http(s)://...)")
    done = 0
    try:
        store = open_store(store_url, **store_options)
        try:
            index = store.name(ALARMS_INDEX)
            _ensure_template(store, index)
            for alarm_id, event in events:
                doc = dict(event, **{"@timestamp": event["source"]["to"]})
                status, parsed = store.request("PUT", "/%s/_create/%s" % (index, alarm_id), doc)
                if status != 409:
                    store.check(status, parsed, "--index: storing alarm %s" % alarm_id)
                stored(alarm_id)
                done += 1
            store.request("POST", "/%s/_refresh" % index)
        finally:
            store.close()
    except StoreError as err:
        raise ReportError("%s (%d of %d event(s) indexed; the others are kept in --state and "
                          "indexed by the next run)" % (err, done, len(events)), status=3)
