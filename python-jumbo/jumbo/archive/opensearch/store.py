"""The OpenSearch store, living beside perfSONAR's own archive (OpenSearch 2.x).

URL: http(s)://[user:pass@]HOST[:PORT][/base-path][?prefix=NAME]
  * port defaults to 9200; a base path (e.g. https://archive/opensearch behind the
    perfSONAR Apache proxy) is prepended to every request;
  * `prefix` is prepended to every index, data stream, template and alias name this
    store touches (tests use it to stay apart; production leaves it empty).
Credentials: basic auth from the URL or `auth=(user, password)`, or `api_key`
("ApiKey <value>" header). TLS verification is on unless verify_ssl=False;
`ca_file` adds a CA bundle. Every request has a timeout (default 30 s).
Only the standard library (http.client, ssl) is used.

What this store owns, and nothing else
--------------------------------------
perfSONAR's archive owns the `pscheduler_*` template (priority 0) and every
`pscheduler_<type>` data stream its Logstash pipeline writes. This store never
installs, overrides or extends a template, mapping or setting of those. It owns:

  pscheduler_<type> for the types in OWNED_TEST_TYPES (this suite's own tests):
      template `jumbo_pscheduler_<type>`, pattern exactly that stream, priority 1,
      repeating perfSONAR's settings, alias `pscheduler` and dynamic templates, with
      the result fields typed. One document per run, in the shape perfSONAR's
      Logstash pipeline gives the same run (logstash_document()), so the two routes
      (this archiver, or the stock http archiver through Logstash) store the same
      fields: dashboards read only those.
  jumbo_history   plain index, one adoption record per run of ANY test type this
                  archiver receives (`jumbo` object = jumbo.archive.record, plus `path`);
                  `_id` = record id, `create`: a repeat is 409 = stored. For this
                  suite's own types also `raw` (the result object, not indexed).
  jumbo_latest    plain index, newest record per path (`_id` = path), version =
                  start in epoch ms, version_type external_gte (older retry = 409);
                  with the record's fields, `row_v1` and `locate_v1`: the ones the
                  report reads, packed in binary doc values (latest_document()).
  jumbo_rejected  one document per run whose document a stream refused (mapping
                  conflict): run, stream, field, reason. The count is what
                  `python3 -m jumbo.archive.opensearch.setup check` prints.

Runs of other test types (trace, throughput, latency, latencybg, rtt) are NOT
written to perfSONAR's streams: perfSONAR's own archiving stores them there.

Set-up and privileges: jumbo.archive.opensearch.setup (one-time `install` by an admin, and
`check`). The store checks at its first write that its streams and indices are
in place (read-only requests the writer role allows) and, if they are not, tries
to install them; when that is refused it fails loudly with the command to run.

Item outcomes: 201/200/409 stored; 429, 5xx, connection errors and timeouts
transient; 401/403 (credentials, privileges), TLS verification failures and 400
(mapping conflict, parse error) permanent. A failure to update jumbo_latest never
fails a run whose history was stored: it is counted (latest_failures) and logged.
"""

import base64
import datetime
import hashlib
import http.client
import json
import re
import socket
import ssl
import sys

from urllib.parse import parse_qs, unquote, urlsplit

from .. import record as records
from ..errors import PermanentError, TransientError

DEFAULT_TIMEOUT = 30.0
# Bump when a template or index mapping below changes: `setup install` then
# replaces the templates and rolls the owned streams over. (5: the record's blackhole_flows.)
TEMPLATE_VERSION = 5

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
    "flows": INTEGER, "blackhole_flows": INTEGER, "throughput_standard": DOUBLE, "throughput_jumbo": DOUBLE,
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


_json = json.JSONEncoder(separators=(",", ":")).encode


def latest_document(rec, key):
    """The jumbo_latest document of adoption record `rec` (path `key`)."""
    body = dict(rec)
    body["path"] = key
    body["@timestamp"] = rec["start"]
    for field, names in LATEST_PACKS:
        packed = _json([rec.get(name) for name in names]).encode("utf-8")
        body[field] = base64.b64encode(packed).decode("ascii")
    return body


class SetupError(TransientError):
    """The archive is not set up for this store (missing/stale template, stream or index,
    or privileges refused). Transient: the run waits (retry policy) until an admin has run
    SETUP_COMMAND; the message says what is wrong and names the command."""


class OpenSearchStore(object):
    kind = "opensearch"

    def __init__(self, scheme, host, port, base_path="", auth=None, api_key=None,
                 verify_ssl=True, ca_file=None, timeout=DEFAULT_TIMEOUT, prefix="",
                 manage_templates=True, pscheduler_streams=True):
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
                try:
                    self.context = ssl.create_default_context(cafile=ca_file)
                except (OSError, ValueError) as err:  # ssl.SSLError is an OSError
                    raise PermanentError("ca-file %s: %s" % (ca_file, err))
            else:
                self.context = ssl._create_unverified_context()  # the data asked for verify-ssl false
        # manage_templates: at the first write, install what is missing if allowed
        # (False: only check, and fail with SETUP_COMMAND).
        self.manage_templates = manage_templates
        # pscheduler_streams: False when perfSONAR's http archiver already sends this
        # suite's runs through Logstash (then only the jumbo_* indices are written here).
        self.pscheduler_streams = pscheduler_streams
        self._conn = None
        self._ready = False
        # Counted for the process's life (the persistent count of rejections is the
        # jumbo_rejected index).
        self.rejections = 0
        self.latest_failures = 0

    @classmethod
    def from_url(cls, url, auth=None, api_key=None, verify_ssl=True, ca_file=None,
                 timeout=None, prefix=None, manage_templates=True, pscheduler_streams=True,
                 **_ignored):
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
                   verify_ssl=verify_ssl, ca_file=ca_file, timeout=timeout, prefix=prefix,
                   manage_templates=manage_templates, pscheduler_streams=pscheduler_streams)

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
            except Exception:  # noqa: BLE001 - best-effort close of a dead connection
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

    # -- names ------------------------------------------------------------------------------

    def name(self, base):
        return self.prefix + base

    def stream(self, test_type):
        return self.name("pscheduler_" + test_type)

    def owned_streams(self):
        return [self.stream(t) for t in OWNED_TEST_TYPES]

    def templates(self):
        """(name, body) of every index template this store owns (and installs via setup)."""
        for ptype in OWNED_TEST_TYPES:
            yield self.name("jumbo_pscheduler_" + ptype), {
                "index_patterns": [self.stream(ptype)],
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
                    "aliases": {self.name("pscheduler"): {}},
                    "mappings": stream_mapping(ptype),
                },
                "_meta": {"managed-by": MANAGED_BY},
            }
        for index in JUMBO_INDICES:
            # Exact-name templates: if an index is deleted, a write re-creates it typed.
            yield self.name(index), {
                "index_patterns": [self.name(index)],
                "priority": 1,
                "version": TEMPLATE_VERSION,
                "template": {
                    "settings": {"number_of_shards": 1, "number_of_replicas": 0,
                                 "refresh_interval": "5s"},
                    "mappings": INDEX_MAPPINGS[index],
                },
                "_meta": {"managed-by": MANAGED_BY},
            }

    def ensure_ready(self):
        """Check once that the owned streams and indices are in place; install if allowed."""
        if self._ready:
            return
        from . import setup
        problems = setup.problems(self)
        if problems and self.manage_templates:
            try:
                setup.install(self)
            except PermanentError:
                pass  # refused (no privileges): the check below says what to do
            problems = setup.problems(self)
        if problems:
            raise SetupError(setup.describe(self, problems))
        self._ready = True

    # -- writing ----------------------------------------------------------------------------

    def put_many(self, items):
        return self.write(self.prepare(items))

    def prepare(self, items):
        """CPU-only half of put_many (no network): records, documents and bulk lines.

        Per record: a `create` into jumbo_history, and for this suite's own test types a
        `create` of the Logstash-shaped document into pscheduler_<type>.
        """
        outcomes = [None] * len(items)
        prepared = []       # (item index, record, number of bulk items)
        lines = []
        history = '{"create":{"_index":%s,"_id":' % _json(self.name(HISTORY_INDEX))
        actions = {}
        for index, item in enumerate(items):
            try:
                rec, raw = records.normalize(item)
                test = raw.get("test") if isinstance(raw, dict) else None
                ptype = test.get("type") if isinstance(test, dict) else None
                owned = ptype in OWNED_TEST_TYPES
                stream_doc = None
                if owned and raw is not None and self.pscheduler_streams:
                    stream_doc = logstash_document(raw, envelope_hrefs(item))
            except records.BadRecord as err:
                outcomes[index] = PermanentError(str(err))
                continue
            body = {"@timestamp": rec["start"], "jumbo": dict(rec, path=records.path_key(rec))}
            if owned and raw is not None:
                body["raw"] = raw
            lines.append(history + _json(rec["id"]) + "}}")
            lines.append(_json(body))
            count = 1
            if stream_doc is not None:
                action = actions.get(ptype)
                if action is None:
                    action = actions[ptype] = '{"create":{"_index":%s,"_id":' % _json(
                        self.stream(ptype))
                lines.append(action + _json(rec["id"]) + "}}")
                lines.append(_json(stream_doc))
                count = 2
            prepared.append((index, rec, count))
        return outcomes, prepared, lines

    @staticmethod
    def merge(jobs):
        """One prepared batch of several (in order): one bulk request for all of them."""
        outcomes, prepared, lines = [], [], []
        for part_outcomes, part_prepared, part_lines in jobs:
            offset = len(outcomes)
            outcomes.extend(part_outcomes)
            prepared.extend((index + offset, rec, count) for index, rec, count in part_prepared)
            lines.extend(part_lines)
        return outcomes, prepared, lines

    def write(self, job):
        """The network half: history bulk, then latest-per-path bulk. Returns the outcomes."""
        outcomes, prepared, lines = job
        if not prepared:
            return outcomes
        self.ensure_ready()
        try:
            items = self._bulk(lines, sum(count for _, _, count in prepared))
        except BodyTooLarge:
            if len(prepared) == 1:
                raise
            # A proxy's body limit: each half on its own (2 lines per bulk item).
            half = len(prepared) // 2
            cut = 2 * sum(count for _, _, count in prepared[:half])
            self.write((outcomes, prepared[:half], lines[:cut]))
            return self.write((outcomes, prepared[half:], lines[cut:]))
        stored = []
        rejected = []
        position = 0
        for index, rec, count in prepared:
            errors = []
            for item in items[position:position + count]:
                error = _item_error(item, rec)
                if error is not None:
                    errors.append(error)
                    if isinstance(error, RejectedDocument):
                        rejected.append((rec, item, error))
            position += count
            if errors:
                # Transient first: retrying can still store everything.
                errors.sort(key=lambda e: not e.transient)
                outcomes[index] = errors[0]
            if not any(e.transient for e in errors):
                # The adoption record stands once jumbo_history holds it; a refused
                # perfSONAR-shaped copy is reported (and counted), not retried.
                if not errors or items[position - count].get("status") in (200, 201, 409):
                    stored.append((index, rec))
        if rejected:
            self._count_rejections(rejected)
        self._update_latest(stored)
        return outcomes

    def _count_rejections(self, rejected):
        self.rejections += len(rejected)
        lines = []
        for rec, item, error in rejected:
            sys.stderr.write("jumbo archiver: %s\n" % error)
            body = {"@timestamp": _now(), "record_id": rec["id"],
                    "run_id": _after(rec["run_href"], "/runs/"), "run_href": rec["run_href"],
                    "test_type": rec["test_type"], "stream": item.get("_index"),
                    "field": getattr(error, "field", None), "reason": str(error)}
            key = "%s|%s" % (rec["id"], item.get("_index"))
            lines.append(_json({"index": {"_index": self.name(REJECTED_INDEX),
                                          "_id": hashlib.sha1(key.encode()).hexdigest()}}))
            lines.append(_json(body))
        try:
            self._bulk(lines, len(rejected))
        except (TransientError, PermanentError) as err:
            sys.stderr.write("jumbo archiver: could not record %d rejection(s): %s\n"
                             % (len(rejected), err))

    def _update_latest(self, stored):
        """Latest per path: the newest stored record of each path in this batch. Never
        changes an outcome: the history is what a run's success rests on."""
        newest = {}
        for index, rec in stored:
            key = records.path_key(rec)
            if key not in newest or (rec["start"], rec["id"]) >= (newest[key]["start"],
                                                                  newest[key]["id"]):
                newest[key] = rec
        if not newest:
            return
        lines = []
        for key, rec in newest.items():
            lines.append(_json({"index": {
                "_index": self.name(LATEST_INDEX), "_id": key,
                "version": records.epoch_ms(rec["start"]), "version_type": "external_gte"}}))
            lines.append(_json(latest_document(rec, key)))
        try:
            failed = [item for item in self._bulk(lines, len(newest))
                      if _item_error(item, None, latest=True) is not None]
            reason = _reason(failed[0]) if failed else None
        except (TransientError, PermanentError) as err:
            failed, reason = list(newest), str(err)
        if failed:
            self.latest_failures += len(failed)
            sys.stderr.write("jumbo archiver: %s not updated for %d path(s) (the runs are "
                             "stored in the history): %s\n"
                             % (self.name(LATEST_INDEX), len(failed), reason))

    def _bulk(self, lines, expected):
        body = "\n".join(lines) + "\n"
        status, parsed = self.request("POST", "/_bulk", body, ndjson=True)
        if status == 403:
            # the security plugin checks _bulk at cluster level first
            from . import setup
            raise SetupError("OpenSearch at %s refused _bulk (HTTP 403: %s); the archive user "
                             "needs the privileges of `%s` (check with: %s)"
                             % (self.url, _reason(parsed), setup.WRITER_ROLE, CHECK_COMMAND))
        if status in (404, 408, 413):
            # From a proxy in front of OpenSearch (which answers _bulk itself otherwise): a
            # timeout, a body over its limit (split by write) or a path it does not route.
            error = BodyTooLarge if status == 413 else TransientError
            raise error("bulk write: HTTP %d from %s: %s%s" % (
                status, self.url, _reason(parsed) or "no reason given", _PROXY_HINTS[status]))
        self._check(status, parsed, "bulk write")
        items = (parsed or {}).get("items")
        if not isinstance(items, list) or len(items) != expected:
            raise TransientError("bulk write: unexpected answer from %s" % self.url)
        return [list(item.values())[0] for item in items]

    # -- reading ----------------------------------------------------------------------------

    def refresh(self):
        self.request("POST", "/%s/_refresh?ignore_unavailable=true&allow_no_indices=true"
                     % ",".join(self.owned_streams() + [self.name(i) for i in JUMBO_INDICES]))

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

    def count(self, test_type="pmtu", index=None):
        """Runs stored: in pscheduler_<test_type> for an owned type (what dashboards see),
        else the adoption records of that record test_type in jumbo_history."""
        self.refresh()
        if index is None and test_type in OWNED_TEST_TYPES:
            index = self.stream(test_type)
        if index is not None:
            status, parsed = self.request("GET", "/%s/_count" % index)
        else:
            status, parsed = self.request(
                "POST", "/%s/_count" % self.name(HISTORY_INDEX),
                {"query": {"term": {"jumbo.test_type": records.TEST_TYPES.get(test_type,
                                                                                test_type)}}})
        if status == 404:
            return 0
        self._check(status, parsed, "count")
        return parsed["count"]

    def rejected(self):
        """The rejections recorded in jumbo_rejected (newest first, at most 100) and their count."""
        self.refresh()
        status, parsed = self.request("POST", "/%s/_search" % self.name(REJECTED_INDEX), {
            "size": 100, "sort": [{"@timestamp": "desc"}], "track_total_hits": True})
        if status == 404:
            return 0, []
        self._check(status, parsed, "reading rejections")
        return (parsed["hits"]["total"]["value"],
                [hit["_source"] for hit in parsed["hits"]["hits"]])

    def export(self, page=1000):
        """Every stored run, as envelopes where the result object was kept (this suite's
        own test types), else as flat records; for replay/migration."""
        after = None
        while True:
            query = {"size": page, "sort": [{"jumbo.start": "asc"}, {"jumbo.id": "asc"}],
                     "query": {"match_all": {}}}
            if after:
                query["search_after"] = after
            status, parsed = self.request("POST", "/%s/_search" % self.name(HISTORY_INDEX), query)
            if status == 404:
                return
            self._check(status, parsed, "export")
            hits = parsed["hits"]["hits"]
            if not hits:
                return
            for hit in hits:
                source = hit["_source"]
                rec = dict(source["jumbo"])
                rec.pop("path", None)
                if isinstance(source.get("raw"), dict):
                    yield {"run-href": rec["run_href"], "task-href": rec["task_href"],
                           "result": source["raw"]}
                else:
                    yield rec
            after = hits[-1]["sort"]


class BodyTooLarge(TransientError):
    """HTTP 413 to a bulk request: fewer records per request may pass."""


_PROXY_HINTS = {
    404: " (no _bulk at this URL: is a proxy's path in the _url right? retried)",
    408: " (request timeout, retried)",
    413: " (over a proxy's body size limit even for one record: raise that limit; retried)",
}


def _reason(parsed):
    if not isinstance(parsed, dict):
        return None
    error = parsed.get("error")
    if isinstance(error, dict):
        return "%s: %s" % (error.get("type"), error.get("reason"))
    return error if isinstance(error, str) else None



_FIELD = re.compile(r"failed to parse field \[([^\]]+)\]|field \[([^\]]+)\]"
                    r"|\[([^\]]+)\] cannot be changed")


class RejectedDocument(PermanentError):
    """A stream refused a run's document (mapping conflict, parse error): final, with
    the run and the field named, and counted (jumbo_rejected)."""

    def __init__(self, message, field=None):
        PermanentError.__init__(self, message)
        self.field = field


def _item_error(item, rec, latest=False):
    status = item.get("status", 0)
    if 200 <= status < 300 or status == 409:
        return None
    reason = _reason(item) or "HTTP %d" % status
    index = item.get("_index") or "?"
    if status == 429 or status >= 500:
        return TransientError("OpenSearch %s is busy (HTTP %d): %s" % (index, status, reason))
    if latest:
        return PermanentError(reason)
    run = (_after(rec["run_href"], "/runs/") or rec["id"]) if rec else "?"
    if status in (401, 403):
        from . import setup
        return SetupError("run %s: OpenSearch refused the write to %s (HTTP %d: %s); the archive "
                          "user needs the privileges of `%s` (check with: %s)"
                          % (run, index, status, reason, setup.WRITER_ROLE, CHECK_COMMAND))
    match = _FIELD.search(reason)
    field = next((g for g in match.groups() if g), None) if match else None
    return RejectedDocument("run %s: %s rejected %s: %s (counted in %s)"
                            % (run, index, "field [%s]" % field if field else "the document",
                               reason, REJECTED_INDEX), field)


def _now():
    return datetime.datetime.utcnow().strftime("%Y-%m-%dT%H:%M:%SZ")


def _after(text, marker):
    if isinstance(text, str) and marker in text:
        return text.split(marker, 1)[1].split("/", 1)[0] or None
    return None


# -- the Logstash document ---------------------------------------------------------------------
# What perfSONAR's pipeline (perfsonar/logstash 342244c, pipeline/02-pscheduler_common.conf,
# 03-normalize_endpoints.conf, 04-iso8601-duration.conf, 99-outputs.conf, ruby/
# pscheduler_test_checksum.rb) makes of a result the http archiver posts, for a test type
# without a 06-result_* filter (pmtu, and this suite's other own types): the result is
# stored verbatim. Reproduced here from reading those files, in our own code.

# Not jumbo.core.units' parser on purpose: this models Logstash's 04-iso8601-duration filter,
# which converts only whole D/H/M and fractional S and leaves anything else as it was.
_LS_DURATION = re.compile(r"^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?\Z")


def logstash_seconds(value):
    """A duration as the pipeline converts it: seconds (float) for P[nD][T[nH][nM][n.nS]]
    (whole days/hours/minutes, fractional seconds); anything else is left as it was."""
    if not isinstance(value, str):
        return value
    match = _LS_DURATION.match(value)
    if not match:
        return value
    days, hours, minutes, seconds = match.groups()
    return (float(seconds or 0) + float(minutes or 0) * 60 + float(hours or 0) * 3600
            + float(days or 0) * 86400)


def _canonical_number(number):
    """A number in the pipeline's canonical form (ES6-style shortest text of a double
    computed from 16 significant digits): 10.0 -> "10", 0.5 -> "0.5", 1e21 -> "1e+21"."""
    if number != number or number in (float("inf"), float("-inf")):
        raise ValueError("NaN or infinity has no canonical JSON form")
    if number == 0:
        return "0"
    sign = ""
    if number < 0:
        number, sign = -number, "-"
    mantissa, exponent = ("%.15E" % number).split("E")
    exponent = int(exponent)
    whole, fraction = mantissa.split(".")
    fraction = fraction.rstrip("0")
    suffix = None
    if 0 < exponent < 21:
        # shift the point right, padding with zeros
        digits = fraction + "0" * max(0, exponent - len(fraction))
        whole, fraction = whole + digits[:exponent], digits[exponent:]
    elif -7 < exponent < 0:
        whole, fraction = "0", "0" * (-exponent - 1) + whole + fraction
    elif exponent != 0:
        suffix = ("+%d" % exponent) if exponent > 0 else str(exponent)
    text = sign + whole + ("." + fraction if fraction else "")
    return text + ("e" + suffix if suffix else "")


def canonical_json(value):
    """The pipeline's canonical JSON: keys sorted by UTF-16 code units, no spaces,
    strings as Ruby's JSON writes them (UTF-8, not \\u-escaped), canonical numbers."""
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, (int, float)):
        return _canonical_number(value)
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(canonical_json(v) for v in value) + "]"
    if isinstance(value, dict):
        keys = sorted(value, key=lambda k: str(k).encode("utf-16-be"))
        return "{" + ",".join(canonical_json(str(k)) + ":" + canonical_json(value[k])
                              for k in keys) + "}"
    return json.dumps(value, ensure_ascii=False)


def test_checksum(test, tool, observer_ip=None):
    """pscheduler.test_checksum as the pipeline computes it: SHA-256 (hex) of the canonical
    JSON of {test as received, observer_ip, tool}. The pipeline computes it in
    02-pscheduler_common.conf, before 03 sets meta.observer.ip, so observer_ip is null
    there; it is kept as an argument only to say so."""
    canonical = canonical_json({"test": test, "observer_ip": observer_ip, "tool": tool})
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


test_checksum.__test__ = False  # not a pytest test


def envelope_hrefs(item):
    """(run href, task href) the archiver daemon gave around a result, if any."""
    if isinstance(item, dict) and isinstance(item.get("result"), dict):
        return item.get("run-href"), item.get("task-href")
    return None, None


def _endpoint(value):
    """A spec endpoint reduced to its host (URL, host:port, [v6]) as the pipeline does."""
    host = records._host(value)
    return host or None


def logstash_document(inner, hrefs=(None, None)):
    """The document perfSONAR's pipeline stores for the result object `inner` (what the
    http archiver posts), except what only Logstash can know: `@timestamp` here is the
    run's start (Logstash: ingest time), there is no `host` (the proxy's address), and
    `meta` has no GeoIP/AS and no DNS look-ups (IP literals only; hostnames as given)."""
    doc = {}
    for key, value in inner.items():
        if key not in ("schedule", "run", "task", "tool", "participants"):
            doc[key] = value
    run = inner.get("run") if isinstance(inner.get("run"), dict) else {}
    task = inner.get("task") if isinstance(inner.get("task"), dict) else {}
    tool = inner.get("tool") if isinstance(inner.get("tool"), dict) else {}
    ps = {}

    def move(value, name):
        if value is not None:
            ps[name] = value

    run_href, task_href = hrefs
    move(run.get("added"), "added")
    move(run.get("start-time"), "start_time")
    move(run.get("end-time"), "end_time")
    move(inner.get("participants"), "participants")
    move(tool.get("name"), "tool")
    detail = task.get("detail") if isinstance(task.get("detail"), dict) else {}
    move(detail.get("duration"), "duration")
    move(task.get("href") or task_href, "task_href")
    move(run.get("href") or run_href, "run_href")
    if isinstance(task.get("schedule"), dict):
        doc["schedule"] = dict(task["schedule"])
    task_id = _after(ps.get("task_href"), "/tasks/")
    run_id = _after(ps.get("run_href"), "/runs/")
    if task_id:
        ps["task_id"] = task_id
    if run_id:
        ps["run_id"] = run_id
    try:
        ps["test_checksum"] = test_checksum(inner.get("test"), ps.get("tool"))
    except (ValueError, OverflowError):
        pass  # NaN/infinite numbers: the pipeline's ruby filter fails too, leaving none
    if "duration" in ps:
        ps["duration"] = logstash_seconds(ps["duration"])
    if "schedule" in doc:
        for key in ("slip", "repeat"):
            if key in doc["schedule"]:
                doc["schedule"][key] = logstash_seconds(doc["schedule"][key])
    doc["pscheduler"] = ps
    doc["meta"] = _meta(inner, ps)
    doc["@version"] = "1"
    start = ps.get("start_time") or (inner.get("schedule") or {}).get("start")
    doc["@timestamp"] = records.iso_utc(start)
    return doc


def _meta(inner, ps):
    test = inner.get("test") if isinstance(inner.get("test"), dict) else {}
    spec = test.get("spec") if isinstance(test.get("spec"), dict) else {}
    observer = _endpoint(ps.get("task_href"))
    source, dest = _endpoint(spec.get("source")), _endpoint(spec.get("dest"))
    if dest and not source:
        source = observer
    meta = {}
    if observer:
        meta["observer"] = _side(observer)
    if source:
        meta["source"] = _side(source)
    if dest:
        meta["destination"] = _side(dest)
    version = spec.get("ip-version")
    if source and dest:
        ips = [records._ip_literal(h) for h in (source, dest)]
        if version in (4, 6):
            meta["ip_version"] = version
        elif all(ips):
            meta["ip_version"] = 6 if ":" in ips[1] else 4
    return meta


def _side(host):
    ip = records._ip_literal(host)
    side = {"hostname": host}
    if ip:
        side["ip"] = ip
    return side
