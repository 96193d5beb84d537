"""The OpenSearch store, living beside perfSONAR's own archive (OpenSearch 2.x): the writer
(put_many = prepare + write) and the few reads the archiver, replay and set-up need.

Beside it in this package: client (URL, credentials, TLS, retries), layout (names, mappings,
templates), logstash (the perfSONAR-shaped document), install / setup (the set-up).

What this store owns, and nothing else
--------------------------------------
perfSONAR's archive owns the `pscheduler_*` template (priority 0) and every `pscheduler_<type>`
data stream its Logstash pipeline writes. This store never installs, overrides or extends a
template, mapping or setting of those. It owns:

  pscheduler_<type> for the types in OWNED_TEST_TYPES (this suite's own tests):
      template `jumbo_pscheduler_<type>`, pattern exactly that stream, priority 1,
      repeating perfSONAR's settings, alias `pscheduler` and dynamic templates, with
      the result fields typed. One document per run, in the shape perfSONAR's
      Logstash pipeline gives the same run (logstash_document()), so the two routes
      (this archiver, or the stock http archiver through Logstash) store the same
      fields: dashboards read only those.
  jumbo_history   plain index, one adoption record per run of ANY test type this
                  archiver receives (`jumbo` object = jumbo.archive.record, plus `path`;
                  two for a `direction: both` jumbo-throughput run, jumbo.archive.directed);
                  `_id` = record id, `create`: a repeat is 409 = stored. For this
                  suite's own types also `raw` (the result object, not indexed).
  jumbo_latest    plain index, newest record per path (`_id` = path), version =
                  start in epoch ms, version_type external_gte (older retry = 409);
                  with the record's fields, `row_v1` and `locate_v1`: the ones the
                  report reads, packed in binary doc values (latest_document()).
  jumbo_rejected  one document per run whose document a stream refused (mapping conflict):
                  run, stream, field, reason; `python3 -m jumbo.archive.opensearch.setup
                  check` prints the count.

Runs of other test types (trace, throughput, latency, latencybg, rtt) are NOT written to
perfSONAR's streams: perfSONAR's own archiving stores them there.

Set-up and privileges: jumbo.archive.opensearch.setup (one-time `install` by an admin, and
`check`). The store checks at its first write that its streams and indices are in place
(read-only requests the writer role allows) and, if not, tries to install them; when that
is refused it fails loudly with the command to run.

Item outcomes: 201/200/409 stored; 429, 5xx, connection errors and timeouts transient;
401/403 (credentials, privileges), TLS verification failures and 400 (mapping conflict, parse
error) permanent. A failure to update jumbo_latest never fails a run whose history was
stored: it is counted (latest_failures) and logged.
"""

import datetime
import hashlib
import re
import sys

from .. import directed, record as records
from ..errors import PermanentError, TransientError
from . import ready
from .client import (WRITER_MAX_ANSWER, BodyTooLarge, OpenSearchClient, SetupError, error_reason)
from .self_setup import SelfSetup
from .layout import (CHECK_COMMAND, HISTORY_INDEX, JUMBO_INDICES, LATEST_INDEX,
                     LATEST_LOCATE_FIELDS, LATEST_ROW_FIELDS, OWNED_TEST_TYPES, REJECTED_INDEX,
                     TEMPLATE_VERSION, WRITER_ROLE, compact_json, latest_document, templates)
from .logstash import envelope_hrefs, href_id, logstash_document

# Names tests and benchmarks take from here.
__all__ = ["HISTORY_INDEX", "JUMBO_INDICES", "LATEST_INDEX", "LATEST_LOCATE_FIELDS",
           "LATEST_ROW_FIELDS", "OWNED_TEST_TYPES", "BodyTooLarge", "OpenSearchStore",
           "RejectedDocument", "SetupError", "latest_document"]


class OpenSearchStore(SelfSetup, OpenSearchClient):
    kind = "opensearch"

    def __init__(self, scheme, host, port, base_path="", manage_templates=True,
                 pscheduler_streams=True, **options):
        options.setdefault("max_answer_bytes", WRITER_MAX_ANSWER)
        OpenSearchClient.__init__(self, scheme, host, port, base_path, **options)
        # manage_templates: at the first write, install what is missing if allowed
        # (False: only check, and fail with SETUP_COMMAND).
        self.manage_templates = manage_templates
        # pscheduler_streams: False when perfSONAR's http archiver already sends this
        # suite's runs through Logstash (then only the jumbo_* indices are written here).
        self.pscheduler_streams = pscheduler_streams
        self._ready = False
        # The install, when this store makes one: on its own thread and connection, so that
        # it goes on past a record's deadline (jumbo.archive.opensearch.self_setup).
        self._clone_args = (scheme, host, port, base_path, dict(
            options, manage_templates=manage_templates, pscheduler_streams=pscheduler_streams))
        self._installer = None
        # What names this archive's set-up, for the note kept across processes (hashed:
        # neither URL nor user name is written).
        self._ready_key = ready.key(self.url, self.prefix, self.pscheduler_streams,
                                    TEMPLATE_VERSION, (options.get("auth") or ("",))[0])
        self._progress = ready.Progress(self._ready_key)
        # Counted for the process's life (the persistent count of rejections is the
        # jumbo_rejected index).
        self.rejections = 0
        self.latest_failures = 0

    def templates(self):
        """(name, body) of every index template this store owns (and installs via setup)."""
        return templates(self.prefix)

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
        history = '{"create":{"_index":%s,"_id":' % compact_json(self.name(HISTORY_INDEX))
        actions = {}
        for index, item in enumerate(items):
            try:
                # One history document per directed observation: two for a `direction: both`
                # run, the second without `raw` and without a stream copy (one per run).
                directed_records = directed.normalize(item)
                rec, raw = directed_records[0]
                test = raw.get("test") if isinstance(raw, dict) else None
                ptype = test.get("type") if isinstance(test, dict) else None
                owned = ptype in OWNED_TEST_TYPES
                stream_doc = None
                if owned and raw is not None and self.pscheduler_streams:
                    stream_doc = logstash_document(raw, envelope_hrefs(item))
            except records.BadRecord as err:
                outcomes[index] = PermanentError(str(err))
                continue
            for rec, raw in directed_records:
                body = {"@timestamp": rec["start"],
                        "jumbo": dict(rec, path=records.path_key(rec))}
                if owned and raw is not None:
                    body["raw"] = raw
                lines.append(history + compact_json(rec["id"]) + "}}")
                lines.append(compact_json(body))
                count = 1
                if stream_doc is not None and raw is not None:
                    action = actions.get(ptype)
                    if action is None:
                        action = actions[ptype] = '{"create":{"_index":%s,"_id":' % (
                            compact_json(self.stream(ptype)))
                    lines.append(action + compact_json(rec["id"]) + "}}")
                    lines.append(compact_json(stream_doc))
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
            items = self.bulk(lines, sum(count for _, _, count in prepared))
        except SetupError:
            # Privileges withdrawn or the set-up undone since it was noted: check next time.
            self._ready = False
            ready.forget(self._ready_key)
            raise
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
                # A both-ways run is two entries of one item: a transient error of either
                # stands (the retry stores the other again as a 409).
                if outcomes[index] is None or not outcomes[index].transient:
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
                    "run_id": href_id(rec["run_href"], "/runs/"), "run_href": rec["run_href"],
                    "test_type": rec["test_type"], "stream": item.get("_index"),
                    "field": getattr(error, "field", None), "reason": str(error)}
            key = "%s|%s" % (rec["id"], item.get("_index"))
            lines.append(compact_json({"index": {"_index": self.name(REJECTED_INDEX),
                                          "_id": hashlib.sha1(key.encode()).hexdigest()}}))
            lines.append(compact_json(body))
        try:
            self.bulk(lines, len(rejected))
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
            lines.append(compact_json({"index": {
                "_index": self.name(LATEST_INDEX), "_id": key,
                "version": records.epoch_ms(rec["start"]), "version_type": "external_gte"}}))
            lines.append(compact_json(latest_document(rec, key)))
        try:
            failed = [item for item in self.bulk(lines, len(newest))
                      if _item_error(item, None, latest=True) is not None]
            reason = error_reason(failed[0]) if failed else None
        except (TransientError, PermanentError) as err:
            failed, reason = list(newest), str(err)
        if failed:
            self.latest_failures += len(failed)
            sys.stderr.write("jumbo archiver: %s not updated for %d path(s) (the runs are "
                             "stored in the history): %s\n"
                             % (self.name(LATEST_INDEX), len(failed), reason))

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
        self.check(status, parsed, "reading latest")
        out = []
        for hit in parsed["hits"]["hits"]:
            rec = records.empty_record()
            rec.update((k, v) for k, v in hit["_source"].items() if k in rec)
            out.append(rec)
        return out

    def search(self, index, query):
        status, parsed = self.request("POST", "/%s/_search" % self.name(index), query)
        self.check(status, parsed, "search")
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
        self.check(status, parsed, "count")
        return parsed["count"]

    def rejected(self):
        """The rejections recorded in jumbo_rejected (newest first, at most 100) and their count."""
        self.refresh()
        status, parsed = self.request("POST", "/%s/_search" % self.name(REJECTED_INDEX), {
            "size": 100, "sort": [{"@timestamp": "desc"}], "track_total_hits": True})
        if status == 404:
            return 0, []
        self.check(status, parsed, "reading rejections")
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
            self.check(status, parsed, "export")
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
    reason = error_reason(item) or "HTTP %d" % status
    index = item.get("_index") or "?"
    if status == 429 or status >= 500:
        return TransientError("OpenSearch %s is busy (HTTP %d): %s" % (index, status, reason))
    if latest:
        return PermanentError(reason)
    run = (href_id(rec["run_href"], "/runs/") or rec["id"]) if rec else "?"
    if status in (401, 403):
        return SetupError("run %s: OpenSearch refused the write to %s (HTTP %d: %s); the archive "
                          "user needs the privileges of `%s` (check with: %s)"
                          % (run, index, status, reason, WRITER_ROLE, CHECK_COMMAND))
    match = _FIELD.search(reason)
    field = next((g for g in match.groups() if g), None) if match else None
    return RejectedDocument("run %s: %s rejected %s: %s (counted in %s)"
                            % (run, index, "field [%s]" % field if field else "the document",
                               reason, REJECTED_INDEX), field)


def _now():
    return datetime.datetime.utcnow().strftime("%Y-%m-%dT%H:%M:%SZ")
