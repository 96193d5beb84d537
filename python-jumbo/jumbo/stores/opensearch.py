"""The OpenSearch store: results in the perfSONAR 5 archive layout (OpenSearch 2.x).

URL: http(s)://[user:pass@]HOST[:PORT][/base-path][?prefix=NAME]
  * port defaults to 9200; a base path (e.g. https://archive/opensearch behind the
    perfSONAR Apache proxy) is prepended to every request;
  * `prefix` is prepended to every index, data stream, template and alias name
    (tests use it to stay apart; production leaves it empty).
Port: 9200 for a bare host, the scheme's port (443/80) when a base path is given.
Credentials: basic auth from the URL or `auth=(user, password)`, or `api_key`
("ApiKey <value>" header). TLS verification is on unless verify_ssl=False;
`ca_file` adds a CA bundle. Every request has a timeout (default 30 s).
Only the standard library (http.client, ssl) is used.

Layout
------
History: one document per run in the data stream `pscheduler_<type>` (the
pScheduler test type: pscheduler_pmtu, pscheduler_jumbo-throughput, pscheduler_trace,
pscheduler_throughput,
pscheduler_latencybg, ...), written with `_bulk` `create` ops and `_id` =
record id, so a repeat is answered 409 and counts as stored. Documents follow
the perfSONAR Logstash output layout:

  @timestamp            measurement start (not ingest time)
  id                    pScheduler run UUID
  test                  {type, spec} as received
  schedule              the task schedule (repeat/slip in seconds) when known
  result                pmtu: the result object verbatim plus `mtu` (= path MTU, as the
                        Logstash trace filter sets it); trace: {succeeded, error, mtu,
                        json: raw}; throughput: {succeeded, error, throughput, retransmits,
                        mss, json: raw}; jumbo-throughput: {succeeded, error, mtu (path
                        MTU), throughput (jumbo legs' mean), mss, json: raw}; latency: {succeeded, error, packets: {sent, lost,
                        loss}, json: raw} (`json` is stored, not indexed)
  reference             the task reference verbatim (pSConfig site labels)
  pscheduler            {start_time, end_time, added, duration (s), tool, participants,
                         task_href, run_href, task_id, run_id, test_checksum}
  meta                  {ip_version, source: {ip, hostname}, destination: {ip, hostname}}
  jumbo                 the flat jumbo.record (all its fields, same names) plus
                        `path` = source|dest|ip_version|test_type

Index templates (priority 10, win over perfSONAR's priority-0 `pscheduler_*`;
each repeats its data_stream, settings, alias `pscheduler` and dynamic
templates): `<prefix>jumbo_pscheduler_pmtu` for `pscheduler_pmtu*` (pmtu result
fields typed) and `<prefix>jumbo_pscheduler_other` for pscheduler_jumbo-throughput,
_trace, _throughput, _latency, _latencybg, _rtt (the Logstash result fields typed). Every `jumbo.*` field is typed (keyword / integer / float / boolean /
date / ip), and `jumbo` has `dynamic: false`, so dynamic mapping never decides
a field the report reads. For data streams that already exist (e.g.
`pscheduler_trace` written by Logstash) the `jumbo` mapping is added with
PUT <stream>/_mapping.

Latest per path: plain index `<prefix>jumbo_latest`, one document per path,
`_id` = jumbo.path (source|dest|ip_version|test_type), body = the record plus
`path` and `@timestamp`, written with version = start in epoch ms and
version_type external_gte: an older late retry gets 409 and leaves the newer
entry alone (409 counts as success). Only records whose history document was
stored (201/409) update it.

Item outcomes: 201/200/409 stored; 429, 5xx, connection errors and timeouts
transient; 401/403 (credentials), TLS verification failures and 400 (mapping
conflict, parse error) permanent.
"""

import base64
import hashlib
import http.client
import json
import socket
import ssl

from urllib.parse import parse_qs, unquote, urlsplit

from .. import record as records
from . import PermanentError, TransientError

DEFAULT_TIMEOUT = 30.0
TEMPLATE_VERSION = 3  # 3: the "other" template also covers pscheduler_jumbo-throughput
LATEST_INDEX = "jumbo_latest"
# pScheduler test types we write, each to pscheduler_<type> (pscheduler_jumbo-throughput for
# the paired 1500/9000 test; it shares the template of the other non-pmtu types).
STREAM_TYPES = ("pmtu", "jumbo-throughput", "trace", "throughput", "latency", "latencybg", "rtt")

KEYWORD = {"type": "keyword"}
INTEGER = {"type": "integer"}
FLOAT = {"type": "float"}
DOUBLE = {"type": "double"}
BOOLEAN = {"type": "boolean"}
DATE = {"type": "date"}
IP = {"type": "ip"}

JUMBO_PROPERTIES = {
    "id": KEYWORD, "run_href": KEYWORD, "task_href": KEYWORD, "test_type": KEYWORD,
    "tool": KEYWORD, "start": DATE, "source": KEYWORD, "dest": KEYWORD,
    "source_ip": IP, "dest_ip": IP, "source_site": KEYWORD, "dest_site": KEYWORD,
    "ip_version": INTEGER, "succeeded": BOOLEAN, "error": {"type": "text"},
    "path_mtu": INTEGER, "local_mtu": INTEGER, "target_mtu": INTEGER, "jumbo": BOOLEAN,
    "pmtud": KEYWORD, "partial": BOOLEAN, "blackhole_ttl": INTEGER, "blackhole_ip": IP,
    "blackhole_size": INTEGER, "reverse_path_mtu": INTEGER, "reverse_pmtud": KEYWORD,
    # Hops are kept in _source, not indexed (the report reads blackhole_* for locations).
    "hops": {"type": "object", "enabled": False},
    "flows": INTEGER, "throughput_standard": DOUBLE, "throughput_jumbo": DOUBLE,
    "gain": DOUBLE, "mss": INTEGER, "rtt": DOUBLE, "loss": DOUBLE, "path": KEYWORD,
}
JUMBO_MAPPING = {"dynamic": False, "properties": JUMBO_PROPERTIES}

DYNAMIC_TEMPLATES = [
    {"ip_addresses": {"match": "ip", "mapping": {"type": "ip"}}},
    {"histograms": {"match": "histogram", "mapping": {"type": "object", "enabled": False}}},
    {"json_unparsed": {"match": "json", "mapping": {"type": "object", "enabled": False}}},
    {"location": {"path_match": "*.geo.location", "mapping": {"type": "geo_point"}}},
]

NOT_INDEXED = {"type": "object", "enabled": False}

PMTU_RESULT = {
    "succeeded": BOOLEAN, "mtu": INTEGER, "path-mtu": INTEGER, "local-mtu": INTEGER,
    "target-mtu": INTEGER, "reverse-path-mtu": INTEGER, "jumbo": BOOLEAN,
    "pmtud": KEYWORD, "reverse-pmtud": KEYWORD, "method": KEYWORD, "ip-version": INTEGER,
    "dest-ip": IP, "probes": INTEGER, "elapsed": FLOAT, "error": {"type": "text"},
    "diags": {"type": "text", "index": False},
    "hops": NOT_INDEXED, "flows": NOT_INDEXED, "ptb": NOT_INDEXED,
    "throughput": {"type": "object", "dynamic": False, "properties": {"gain": DOUBLE}},
    "blackhole": {"properties": {"ttl": INTEGER, "ip": IP, "size": INTEGER}},
}
# Other test types: the fields the Logstash filters produce for them.
OTHER_RESULT = {
    "succeeded": BOOLEAN, "error": {"type": "text"}, "mtu": INTEGER, "throughput": DOUBLE,
    "retransmits": INTEGER, "mss": INTEGER,
    "packets": {"properties": {"sent": INTEGER, "lost": INTEGER, "loss": DOUBLE}},
}


def doc_properties(result_properties):
    return {
        "@timestamp": DATE,
        "pscheduler": {"properties": {
            "start_time": DATE, "end_time": DATE, "added": DATE, "duration": FLOAT,
            "tool": KEYWORD, "task_href": KEYWORD, "run_href": KEYWORD, "task_id": KEYWORD,
            "run_id": KEYWORD, "test_checksum": KEYWORD, "participants": KEYWORD}},
        "meta": {"properties": {
            "ip_version": INTEGER,
            "source": {"properties": {"ip": IP, "hostname": KEYWORD}},
            "destination": {"properties": {"ip": IP, "hostname": KEYWORD}}}},
        "reference": {"properties": {"source-site": KEYWORD, "dest-site": KEYWORD}},
        "result": {"properties": result_properties},
        "jumbo": JUMBO_MAPPING,
    }


LATEST_MAPPING = {"dynamic": False,
                  "properties": dict(JUMBO_PROPERTIES, **{"@timestamp": DATE})}


_json = json.JSONEncoder(separators=(",", ":")).encode


class OpenSearchStore(object):
    kind = "opensearch"

    def __init__(self, scheme, host, port, base_path="", auth=None, api_key=None,
                 verify_ssl=True, ca_file=None, timeout=DEFAULT_TIMEOUT, prefix="",
                 manage_templates=True):
        self.scheme = scheme
        self.host = host
        self.port = port
        self.base_path = base_path.rstrip("/")
        self.timeout = timeout or DEFAULT_TIMEOUT
        self.prefix = prefix or ""
        self.url = "%s://%s:%s%s" % (scheme, host, port, self.base_path)
        self.headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if api_key:
            self.headers["Authorization"] = "ApiKey " + api_key
        elif auth:
            token = base64.b64encode(("%s:%s" % auth).encode("utf-8")).decode("ascii")
            self.headers["Authorization"] = "Basic " + token
        self.context = None
        if scheme == "https":
            if verify_ssl:
                self.context = ssl.create_default_context(cafile=ca_file)
            else:
                self.context = ssl._create_unverified_context()  # noqa: S323 - asked for
        self.manage_templates = manage_templates
        self._conn = None
        self._ready = False
        self._mapped_streams = set()

    @classmethod
    def from_url(cls, url, auth=None, api_key=None, verify_ssl=True, ca_file=None,
                 timeout=None, prefix=None, **_ignored):
        parts = urlsplit(url)
        query = parse_qs(parts.query)
        if parts.username is not None and not auth and not api_key:
            auth = (unquote(parts.username), unquote(parts.password or ""))
        port = parts.port
        if port is None:
            # Bare host: OpenSearch's own port; behind a proxy path: the scheme's port.
            if parts.path.strip("/"):
                port = 443 if parts.scheme == "https" else 80
            else:
                port = 9200
        if prefix is None:
            prefix = (query.get("prefix") or [""])[0]
        return cls(parts.scheme, parts.hostname, port, parts.path, auth=auth, api_key=api_key,
                   verify_ssl=verify_ssl, ca_file=ca_file, timeout=timeout, prefix=prefix)

    # -- HTTP -------------------------------------------------------------------------------

    def _connect(self):
        if self.scheme == "https":
            return http.client.HTTPSConnection(self.host, self.port, timeout=self.timeout,
                                               context=self.context)
        return http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)

    def close(self):
        if self._conn is not None:
            try:
                self._conn.close()
            except Exception:  # noqa: BLE001
                pass
            self._conn = None

    def request(self, method, path, body=None, ndjson=False):
        """(status, parsed JSON or None). Raises TransientError/PermanentError on transport trouble."""
        if isinstance(body, (dict, list)):
            body = _json(body)
        if isinstance(body, str):
            body = body.encode("utf-8")
        headers = dict(self.headers)
        if ndjson:
            headers["Content-Type"] = "application/x-ndjson"
        url = self.base_path + path
        for attempt in (1, 2):
            fresh = self._conn is None
            if fresh:
                self._conn = self._connect()
            try:
                self._conn.request(method, url, body=body, headers=headers)
                response = self._conn.getresponse()
                data = response.read()
                status = response.status
                if response.getheader("connection", "").lower() == "close":
                    self.close()
                break
            except ssl.SSLError as err:
                self.close()
                if "CERTIFICATE_VERIFY_FAILED" in str(err) or "certificate" in str(err).lower():
                    raise PermanentError("TLS certificate verification failed for %s: %s"
                                         % (self.url, getattr(err, "reason", None) or err))
                raise TransientError("TLS error talking to %s: %s" % (self.url, err))
            except ssl.CertificateError as err:
                self.close()
                raise PermanentError("TLS certificate of %s does not match: %s" % (self.url, err))
            except socket.timeout:
                self.close()
                raise TransientError("timeout after %gs talking to %s" % (self.timeout, self.url))
            except (OSError, http.client.HTTPException) as err:
                self.close()
                # A pooled keep-alive connection may have been closed by the server: retry once.
                if attempt == 1 and not fresh and not isinstance(err, ConnectionRefusedError):
                    continue
                raise TransientError("cannot reach OpenSearch at %s: %s" % (self.url, err))
        parsed = None
        if data:
            try:
                parsed = json.loads(data.decode("utf-8"))
            except ValueError:
                parsed = None
        return status, parsed

    def _check(self, status, parsed, what):
        if 200 <= status < 300:
            return
        reason = _reason(parsed) or ("HTTP %d" % status)
        message = "%s: HTTP %d from %s: %s" % (what, status, self.url, reason)
        if status in (401, 403):
            raise PermanentError("%s (check the credentials)" % message)
        if status == 429 or status >= 500:
            raise TransientError(message)
        raise PermanentError(message)

    # -- set-up -----------------------------------------------------------------------------

    def name(self, base):
        return self.prefix + base

    def templates(self):
        """(name, body) of the two index templates: pmtu, and the other test types."""
        others = [self.name("pscheduler_%s" % t) for t in STREAM_TYPES if t != "pmtu"]
        for suffix, patterns, result in (("pmtu", [self.name("pscheduler_pmtu*")], PMTU_RESULT),
                                         ("other", others, OTHER_RESULT)):
            yield self.name("jumbo_pscheduler_" + suffix), {
                "index_patterns": patterns,
                "priority": 10,
                "version": TEMPLATE_VERSION,
                "data_stream": {},
                "template": {
                    "settings": {"number_of_shards": 1, "number_of_replicas": 0,
                                 "refresh_interval": "5s"},
                    "aliases": {self.name("pscheduler"): {}},
                    "mappings": {"dynamic_templates": DYNAMIC_TEMPLATES,
                                 "properties": doc_properties(result)},
                },
                "_meta": {"managed-by": "jumbo archiver"},
            }

    def ensure_ready(self):
        if self._ready:
            return
        if self.manage_templates:
            for name, body in self.templates():
                status, parsed = self.request("GET", "/_index_template/" + name)
                current = None
                if status == 200 and parsed:
                    for entry in parsed.get("index_templates", []):
                        current = entry.get("index_template", {}).get("version")
                elif status not in (404, 403):
                    self._check(status, parsed, "reading index template")
                if status != 403 and current != TEMPLATE_VERSION:
                    status, parsed = self.request("PUT", "/_index_template/" + name, body)
                    if status != 403:
                        self._check(status, parsed, "installing index template %s" % name)
            index = self.name(LATEST_INDEX)
            status, parsed = self.request("HEAD", "/" + index)
            if status == 404:
                status, parsed = self.request("PUT", "/" + index, {
                    "settings": {"number_of_shards": 1, "number_of_replicas": 0},
                    "mappings": LATEST_MAPPING})
                if status == 400 and "already_exists" in _json(parsed or {}):
                    status = 200
                self._check(status, parsed, "creating %s" % index)
            elif status not in (200, 403):
                self._check(status, parsed, "checking %s" % index)
        self._ready = True

    def _ensure_stream_mapping(self, ptype):
        """Add the jumbo mapping to a data stream created before our template (e.g. by Logstash)."""
        stream = self.name("pscheduler_" + ptype)
        if stream in self._mapped_streams or not self.manage_templates:
            return
        status, parsed = self.request("PUT", "/%s/_mapping" % stream,
                                      {"properties": {"jumbo": JUMBO_MAPPING}})
        if status == 400:
            # A conflicting jumbo mapping already there: documents will say so item by item.
            pass
        elif status not in (200, 404, 403):
            self._check(status, parsed, "mapping %s" % stream)
        self._mapped_streams.add(stream)

    # -- writing ----------------------------------------------------------------------------

    def put_many(self, items):
        return self.write(self.prepare(items))

    def prepare(self, items):
        """CPU-only half of put_many (no network): records, documents and bulk lines."""
        outcomes = [None] * len(items)
        prepared = []
        lines = []
        types = set()
        actions = {}  # test type -> the bulk action line up to the _id
        for index, item in enumerate(items):
            try:
                rec, raw = records.normalize(item)
                doc = document(rec, raw, item)
            except records.BadRecord as err:
                outcomes[index] = PermanentError(str(err))
                continue
            ptype = doc["test"]["type"]
            action = actions.get(ptype)
            if action is None:
                types.add(ptype)
                action = actions[ptype] = '{"create":{"_index":%s,"_id":' % _json(
                    self.name("pscheduler_" + ptype))
            prepared.append((index, rec))
            lines.append(action + _json(rec["id"]) + "}}")
            lines.append(_json(doc))
        return outcomes, prepared, lines, types

    @staticmethod
    def merge(jobs):
        """One prepared batch of several (in order): one bulk request for all of them."""
        outcomes, prepared, lines, types = [], [], [], set()
        for part_outcomes, part_prepared, part_lines, part_types in jobs:
            offset = len(outcomes)
            outcomes.extend(part_outcomes)
            prepared.extend((index + offset, rec) for index, rec in part_prepared)
            lines.extend(part_lines)
            types.update(part_types)
        return outcomes, prepared, lines, types

    def write(self, job):
        """The network half: history bulk, then latest-per-path bulk. Returns the outcomes."""
        outcomes, prepared, lines, types = job
        if not prepared:
            return outcomes
        self.ensure_ready()
        for ptype in types:
            self._ensure_stream_mapping(ptype)
        items_out = self._bulk(lines, len(prepared))
        stored = []
        for (index, rec), item in zip(prepared, items_out):
            error = _item_error(item, create=True)
            if error is None:
                stored.append((index, rec))
            else:
                outcomes[index] = error

        # Latest per path: the newest stored record of each path in this batch.
        newest = {}
        for index, rec in stored:
            key = records.path_key(rec)
            if key not in newest or (rec["start"], rec["id"]) >= (newest[key][1]["start"],
                                                                  newest[key][1]["id"]):
                newest[key] = (index, rec)
        if newest:
            lines = []
            order = []
            for key, (index, rec) in newest.items():
                body = dict(rec)
                body["path"] = key
                body["@timestamp"] = rec["start"]
                lines.append(_json({"index": {
                    "_index": self.name(LATEST_INDEX), "_id": key,
                    "version": records.epoch_ms(rec["start"]), "version_type": "external_gte"}}))
                lines.append(_json(body))
                order.append(index)
            for index, item in zip(order, self._bulk(lines, len(order))):
                error = _item_error(item, create=False)
                if error is not None:
                    outcomes[index] = error
        return outcomes

    def _bulk(self, lines, expected):
        body = "\n".join(lines) + "\n"
        status, parsed = self.request("POST", "/_bulk", body, ndjson=True)
        self._check(status, parsed, "bulk write")
        items = (parsed or {}).get("items")
        if not isinstance(items, list) or len(items) != expected:
            raise TransientError("bulk write: unexpected answer from %s" % self.url)
        return [list(item.values())[0] for item in items]

    # -- reading ----------------------------------------------------------------------------

    def refresh(self):
        self.request("POST", "/%s,%s/_refresh" % (self.name("pscheduler_*"),
                                                   self.name(LATEST_INDEX)))

    def latest(self, test_type=None):
        query = {"size": 10000, "sort": [{"path": "asc"}],
                 "query": {"term": {"test_type": test_type}} if test_type else {"match_all": {}}}
        status, parsed = self.request("POST", "/%s/_search" % self.name(LATEST_INDEX), query)
        if status == 404:
            return []
        self._check(status, parsed, "reading latest")
        out = []
        for hit in parsed["hits"]["hits"]:
            rec = records.empty_record()
            rec.update((k, v) for k, v in hit["_source"].items() if k in rec)
            out.append(rec)
        return out

    def search(self, index, query):
        status, parsed = self.request("POST", "/%s/_search" % self.name(index), query)
        self._check(status, parsed, "search")
        return parsed

    def count(self, test_type="pmtu"):
        self.refresh()
        status, parsed = self.request("GET", "/%s/_count" % self.name("pscheduler_" + test_type))
        if status == 404:
            return 0
        self._check(status, parsed, "count")
        return parsed["count"]

    def export(self, page=1000):
        """Every stored document of every pscheduler_<type> stream, as envelopes."""
        streams = ",".join(self.name("pscheduler_" + t) for t in STREAM_TYPES)
        after = None
        while True:
            query = {"size": page, "sort": [{"@timestamp": "asc"}, {"jumbo.id": "asc"}],
                     "query": {"exists": {"field": "jumbo.id"}}}
            if after:
                query["search_after"] = after
            status, parsed = self.request(
                "POST", "/%s/_search?ignore_unavailable=true&allow_no_indices=true" % streams, query)
            self._check(status, parsed, "export")
            hits = parsed["hits"]["hits"]
            if not hits:
                return
            for hit in hits:
                yield envelope_of(hit["_source"])
            after = hits[-1]["sort"]


def _reason(parsed):
    if not isinstance(parsed, dict):
        return None
    error = parsed.get("error")
    if isinstance(error, dict):
        return "%s: %s" % (error.get("type"), error.get("reason"))
    return error if isinstance(error, str) else None


def _item_error(item, create):
    status = item.get("status", 0)
    if 200 <= status < 300 or status == 409:
        return None
    reason = _reason(item) or "HTTP %d" % status
    message = "OpenSearch %s rejected the document: %s" % ("history" if create else "latest", reason)
    if status == 429 or status >= 500:
        return TransientError(message)
    return PermanentError(message)


# -- documents ---------------------------------------------------------------------------------

_DURATIONS = {}


def _seconds(value):
    if not isinstance(value, str):
        return records.duration_seconds(value)
    try:
        return _DURATIONS[value]
    except KeyError:
        seconds = records.duration_seconds(value)
        if len(_DURATIONS) >= 1024:
            _DURATIONS.clear()
        _DURATIONS[value] = seconds
        return seconds


def _after(text, marker):
    if isinstance(text, str) and marker in text:
        return text.split(marker, 1)[1].split("/", 1)[0] or None
    return None


_CHECKSUMS = {}


def _checksum(test, tool):
    """test_checksum, remembered for the tests seen lately (a task repeats its test)."""
    spec = test.get("spec")
    try:
        key = (tool, test.get("type"), len(test),
               tuple(sorted(spec.items())) if isinstance(spec, dict) else spec)
        value = _CHECKSUMS.get(key)
    except TypeError:  # a spec value that cannot be a key (list, object): no memory
        return test_checksum(test, tool)
    if value is None:
        value = test_checksum(test, tool)
        if len(_CHECKSUMS) >= 4096:
            _CHECKSUMS.clear()
        _CHECKSUMS[key] = value
    return value


def test_checksum(test, tool):
    canonical = json.dumps({"observer_ip": None, "test": test, "tool": tool},
                           sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _time(value):
    try:
        return records.iso_utc(value) if value else None
    except records.BadRecord:
        return None


def document(rec, raw, original=None):
    """The OpenSearch document of one record (Logstash layout + `jumbo`)."""
    raw = raw if isinstance(raw, dict) else {}
    test = raw.get("test") if isinstance(raw.get("test"), dict) else {
        "type": rec["test_type"], "spec": {"source": rec["source"], "dest": rec["dest"]}}
    ptype = test.get("type") or rec["test_type"]
    result = raw.get("result") if isinstance(raw.get("result"), dict) else {}
    run = raw.get("run") if isinstance(raw.get("run"), dict) else {}
    task = raw.get("task") if isinstance(raw.get("task"), dict) else {}

    if ptype == "pmtu":
        body = dict(result)
        if rec["path_mtu"] is not None:
            body["mtu"] = rec["path_mtu"]
        if "succeeded" not in body:
            body["succeeded"] = rec["succeeded"]
    else:
        body = {"succeeded": rec["succeeded"], "error": rec["error"], "json": result}
        if ptype in ("trace", "jumbo-throughput") and rec["path_mtu"] is not None:
            body["mtu"] = rec["path_mtu"]
        if ptype == "jumbo-throughput":
            # The Logstash throughput fields: the jumbo legs' mean and MSS.
            body["throughput"] = rec["throughput_jumbo"]
            body["mss"] = rec["mss"]
        elif ptype == "throughput":
            summary = (result.get("summary") or {}).get("summary") or {}
            body["throughput"] = rec["throughput_jumbo"] or rec["throughput_standard"]
            body["retransmits"] = summary.get("retransmits") if isinstance(
                summary.get("retransmits"), int) else None
            body["mss"] = rec["mss"]
        elif ptype in ("latency", "latencybg"):
            sent, lost = result.get("packets-sent"), result.get("packets-lost")
            body["packets"] = {"sent": sent if isinstance(sent, int) else None,
                               "lost": lost if isinstance(lost, int) else None,
                               "loss": rec["loss"]}

    tool = raw.get("tool")
    tool_name = tool.get("name") if isinstance(tool, dict) else (tool or rec["tool"])
    pscheduler = {
        "start_time": rec["start"],
        "end_time": _time(run.get("end-time")),
        "added": _time(run.get("added")),
        "duration": _seconds((raw.get("schedule") or {}).get("duration")
                             if isinstance(raw.get("schedule"), dict) else None),
        "tool": tool_name,
        "participants": raw.get("participants") if isinstance(raw.get("participants"), list)
        else [p for p in (rec["source"],) if p],
        "task_href": rec["task_href"],
        "run_href": rec["run_href"],
        "task_id": _after(rec["task_href"] or rec["run_href"], "/tasks/"),
        "run_id": _after(rec["run_href"], "/runs/") or raw.get("id"),
        "test_checksum": _checksum(test, tool_name),
    }
    meta = {"ip_version": rec["ip_version"],
            "source": {"hostname": rec["source"]}, "destination": {"hostname": rec["dest"]}}
    if rec["source_ip"]:
        meta["source"]["ip"] = rec["source_ip"]
    if rec["dest_ip"]:
        meta["destination"]["ip"] = rec["dest_ip"]
    doc = {
        "@timestamp": rec["start"],
        "id": raw.get("id") or pscheduler["run_id"],
        "test": test,
        "result": body,
        "reference": raw.get("reference") if isinstance(raw.get("reference"), dict) else {},
        "pscheduler": pscheduler,
        "meta": meta,
        "jumbo": dict(rec, path=records.path_key(rec)),
    }
    schedule = task.get("schedule")
    if isinstance(schedule, dict):
        schedule = dict(schedule)
        for key in ("repeat", "slip"):
            if key in schedule:
                schedule[key] = _seconds(schedule[key])
        doc["schedule"] = schedule
    return doc


def envelope_of(doc):
    """Rebuild an archiver envelope from a stored document (for replay/migration)."""
    ps = doc.get("pscheduler") or {}
    test = doc.get("test") or {}
    result = doc.get("result") or {}
    if test.get("type") == "pmtu":
        inner_result = dict(result)
        inner_result.pop("mtu", None)
    else:
        inner_result = result.get("json") if isinstance(result.get("json"), dict) else {}
    inner = {
        "id": doc.get("id"),
        "schedule": {"start": ps.get("start_time")},
        "test": test,
        "tool": {"name": ps.get("tool")},
        "participants": ps.get("participants"),
        "result": inner_result,
        "reference": doc.get("reference") or None,
        "run": {"href": ps.get("run_href"), "end-time": ps.get("end_time")},
        "task": {"href": ps.get("task_href")},
    }
    return {"run-href": ps.get("run_href"), "task-href": ps.get("task_href"), "result": inner}
