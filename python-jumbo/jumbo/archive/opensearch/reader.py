"""The report's questions as OpenSearch queries (http(s)://[user:pass@]HOST[:PORT][/base][?prefix=P]).

Layout read (written by the jumbo archiver, jumbo/archive/opensearch/store.py):
  <P>jumbo_history          one document per archived run of every test type, the flat
                            adoption record under `jumbo` (typed: keyword/integer/boolean/
                            date/ip), `jumbo.path` = source|dest|ip_version|test_type
                            (pmtu runs, jumbo-throughput `jumbo.gain`, latency `jumbo.rtt`/`loss`)
  <P>jumbo_latest           one document per path (_id = path): the newest record
  <P>pscheduler_latency*    perfSONAR's own latency documents (Logstash layout,
                            `result.latency.median` one-way ms, `result.packets.loss`) when
                            the jumbo archiver has no latency records

What runs in OpenSearch: counts and min/max (aggregations); the latest result per path (two
disjoint scrolls over the latest index, side by side, of the fields the report reads packed
in binary doc values (store.LATEST_ROW for every path, store.LATEST_LOCATE's addresses, black
hole and hops too where localisation looks; _source for documents without them); composite +
top_hits over the history when the window ends in the past or the latest index is missing);
the trend (date_histogram with per-state filter sub-aggregations); partial black holes across
runs (opensearch/evidence.py: aggregations over the window); the paths that changed
state (the documents of each path that are not in its latest state, aggregated on the path
with composite: no scripts, since a bare OpenSearch has no painless); the latency per path
(the latest index's rows, or an average per address pair over perfSONAR's own documents). Only the
histories of paths that did change are read back (at most
MAX_CHANGED_HISTORY of them) to date the changes.
"""

import binascii
import json
import sys
import threading
from concurrent.futures import ThreadPoolExecutor, wait
from operator import itemgetter

from ..errors import ReportError, StoreDown, StoreError
from ..urls import check_url
from . import evidence as os_evidence
from .store import LATEST_PACKS, LATEST_ROW_FIELDS, OpenSearchStore

from .. import path_state
from ..query_base import Latest, Queries, state_of

PAGE = 5000
SCROLL_PAGE = 10000   # hits per scroll page
TIMEOUT = 60.0
MAX_CHANGED_HISTORY = 5000     # paths whose history is read back to date their changes

# The packed fields read: every path's row, and the localisation values after it.
ROW = LATEST_PACKS[:1]
LOCATED = LATEST_PACKS
_ROW_LENGTH = len(LATEST_ROW_FIELDS)


LATEST_SOURCE = ["source", "dest", "ip_version", "source_ip", "dest_ip", "source_site",
                 "dest_site", "start", "succeeded", "error", "path_mtu", "local_mtu", "pmtud",
                 "partial", "blackhole_ttl", "blackhole_ip", "blackhole_size",
                 "reverse_path_mtu", "reverse_pmtud"]


class OpenSearchQueries(Queries):
    name = "opensearch"

    def __init__(self, url, **options):
        """`options` are the archiver store's (jumbo.archive.archiver.store_options): auth,
        api_key, verify_ssl, ca_file, timeout; the URL's user:pass is used when no
        credentials are given."""
        try:
            check_url(url)
        except ValueError as err:
            raise ReportError(str(err))
        options.setdefault("timeout", TIMEOUT)
        self._url = url
        self._options = options
        # One OpenSearch client (the store's) per reader thread: the client keeps one
        # keep-alive connection, and the report's queries run in parallel threads.
        self._local = threading.local()
        self._clients = []
        self._clients_lock = threading.Lock()
        # Reads the next page of each scroll while its caller handles the current one (at most
        # three scrolls run at once: two of the latest index, then gains and latency).
        self._ahead = ThreadPoolExecutor(max_workers=3, thread_name_prefix="scroll-ahead")
        client = self._client()
        self.prefix = client.prefix
        self.display = client.url
        status, body = self.request("GET", "/")
        if status != 200:
            reason = " (check the credentials)" if status in (401, 403) else ""
            raise StoreDown("OpenSearch at %s answered HTTP %d%s" % (self.display, status, reason))
        self.pmtu = self.prefix + "jumbo_history"   # history of every type; filter on jumbo.test_type
        self.latest_index = self.prefix + "jumbo_latest"

    # -- HTTP -------------------------------------------------------------------------------
    def _client(self):
        client = getattr(self._local, "client", None)
        if client is None:
            client = self._local.client = OpenSearchStore.from_url(self._url, **self._options)
            with self._clients_lock:
                self._clients.append(client)
        return client

    def request(self, method, path, body=None):
        """(status, parsed JSON or None) through this thread's store client; StoreDown when
        OpenSearch cannot be reached or the TLS handshake fails."""
        try:
            return self._client().request(method, path, body)
        except StoreError as err:
            raise StoreDown(str(err))

    def search(self, index, body, what):
        status, parsed = self.request(
            "POST", "/%s/_search?ignore_unavailable=true&allow_no_indices=true" % index, body)
        if status == 404:
            return None
        if status != 200 or not isinstance(parsed, dict):
            reason = ""
            if isinstance(parsed, dict) and isinstance(parsed.get("error"), dict):
                err = parsed["error"]
                root = (err.get("root_cause") or [{}])[0]
                reason = ": %s" % (root.get("reason") or err.get("reason"))
            if status in (401, 403):
                raise StoreDown("OpenSearch refused the %s query (HTTP %d)%s" % (what, status, reason))
            raise StoreDown("OpenSearch failed the %s query (HTTP %d)%s" % (what, status, reason))
        if "aggs" in body and "aggregations" not in parsed:
            # A wildcard that matched no index (e.g. no latency data stream yet) answers
            # 200 with hits but without aggregations: the same as no data.
            return None
        return parsed

    def close(self):
        self._ahead.shutdown(wait=True)
        with self._clients_lock:
            clients, self._clients = self._clients, []
        for client in clients:
            client.close()

    # -- helpers ----------------------------------------------------------------------------
    def _range(self, window, field="jumbo.start"):
        if not window.since and not window.until:
            return []
        rng = {"format": "strict_date_optional_time"}
        if window.since:
            rng["gte"] = window.since
        if window.until:
            rng["lt"] = window.until
        return [{"range": {field: rng}}]

    def _filter(self, window, test_type="pmtu"):
        clauses = self._range(window)
        if test_type:
            clauses.append({"term": {"jumbo.test_type": test_type}})
        return {"bool": {"filter": clauses}}

    def _composite(self, index, query, sources, aggs, what, page=PAGE):
        after = None
        while True:
            comp = {"size": page, "sources": sources}
            if after:
                comp["after"] = after
            body = {"size": 0, "query": query, "aggs": {"c": {"composite": comp, "aggs": aggs}}}
            parsed = self.search(index, body, what)
            if parsed is None:
                return
            agg = parsed["aggregations"]["c"]
            for bucket in agg["buckets"]:
                yield bucket
            after = agg.get("after_key")
            if not after or not agg["buckets"]:
                return

    # -- the questions ----------------------------------------------------------------------
    def count(self, window):
        body = {"size": 0, "track_total_hits": True, "query": self._filter(window),
                "aggs": {"first": {"min": {"field": "jumbo.start"}},
                         "last": {"max": {"field": "jumbo.start"}}}}
        parsed = self.search(self.pmtu, body, "count")
        if parsed is None:
            return 0, None, None
        n = parsed["hits"]["total"]["value"]
        if not n:
            return 0, None, None
        return (n, _iso(parsed["aggregations"]["first"]),
                _iso(parsed["aggregations"]["last"]))

    def latest(self, window, target):
        if window.until or not self._has_latest_index():
            # A past window, or a store written without the latest index: from the history.
            yield from self._latest_from_history(window, target)
            return
        # The latest-per-path index: one document per path, read in two disjoint scrolls that
        # run side by side (OpenSearch serves both): the paths where localisation looks (black
        # holes, and paths whose forward direction fails although the source host is
        # configured for the target) with their addresses, black hole and hops; every other
        # path without them (_latest_values). Each document is fetched once: reading the
        # extras as a second pass over paths already scanned cost ~25 % more documents
        # decompressed and decoded.
        pmtu = [{"term": {"test_type": "pmtu"}}] + self._range(window, "start")
        forward_ok = {"bool": {"filter": [{"term": {"succeeded": True}},
                                          {"range": {"path_mtu": {"gte": target}}}]}}
        localise = {"bool": {"minimum_should_match": 1, "should": [
            path_state.filters(target, prefix="")["blackhole"],
            {"bool": {"must_not": [forward_ok, {"range": {"local_mtu": {"lt": target}}}]}}]}}
        failing = {"bool": {"filter": pmtu + [localise]}}
        rest = {"bool": {"filter": pmtu, "must_not": [localise]}}
        extra = []
        failure = []

        def read_failing():
            try:
                for values in self._latest_values(failing, LOCATED):
                    extra.append(_row_latest(values))
            except BaseException as err:  # raised in the caller's thread below
                failure.append(err)
        thread = threading.Thread(target=read_failing, daemon=True)
        thread.start()
        try:
            for values in self._latest_values(rest):
                yield _row_latest(values)
        finally:
            thread.join()
        if failure:
            raise failure[0]
        yield from extra

    def _latest_values(self, query, packs=ROW):
        """The values of the fields `packs` hold, one list per latest document matching
        `query`: decoded from its packed fields (binary doc values, one JSON decode per page)
        where the archiver wrote them, else from its _source (documents written before
        template version 4)."""
        fields = [field for field, _names in packs]
        names = [name for _field, pack in packs for name in pack]
        exists = [{"exists": {"field": field}} for field in fields]
        decode = binascii.a2b_base64
        packed = {"bool": {"filter": [query] + exists}}
        for hits in self._scroll_pages(self.latest_index, packed, fields=fields):
            # OpenSearch sends binary doc values in base64 without its padding; each pack is
            # a JSON array, so a hit's values are the packs' inner texts joined.
            texts = []
            for hit in hits:
                values = hit["fields"]
                texts.append(b",".join([decode(text + "=" * (-len(text) % 4))[1:-1]
                                        for text in (values[field][0] for field in fields)]))
            yield from json.loads(b"[[%s]]" % b"],[".join(texts)) if texts else ()
        unpacked = {"bool": {"filter": [query], "minimum_should_match": 1, "should": [
            {"bool": {"must_not": [clause]}} for clause in exists]}}
        for hit in self._scroll(self.latest_index, unpacked, source=names):
            src = hit.get("_source", {})
            yield [src.get(name) for name in names]

    def _has_latest_index(self):
        status, _ = self.request("HEAD", "/" + self.latest_index)
        return status == 200

    def _scroll(self, index, query, fields=None, source=None):
        """Every hit of `query`, one by one (see _scroll_pages)."""
        for hits in self._scroll_pages(index, query, fields, source):
            yield from hits

    def _scroll_pages(self, index, query, fields=None, source=None):
        """Every hit of `query` (scroll in index order), a page (a list) at a time: the
        doc-value `fields` of each hit (its `fields`), or its `_source` restricted to
        `source`; pages of SCROLL_PAGE hits."""
        size = SCROLL_PAGE
        body = {"size": size, "query": query, "sort": ["_doc"]}
        if fields is not None:
            # No stored field at all (not even _id): OpenSearch then reads only doc values,
            # ~30 % less of its CPU for the ~90,000 latest and latency rows.
            body["_source"] = False
            body["stored_fields"] = "_none_"
            body["docvalue_fields"] = fields
        else:
            body["_source"] = source
        keep = "hits.hits.fields" if fields is not None else "hits.hits._source"
        status, parsed = self.request(
            "POST", "/%s/_search?scroll=1m&ignore_unavailable=true&allow_no_indices=true"
            "&filter_path=_scroll_id,%s" % (index, keep), body)
        if status == 404:
            return
        if status != 200 or not isinstance(parsed, dict):
            raise StoreDown("OpenSearch failed the latest-results query (HTTP %d)" % status)
        scroll_id = parsed.get("_scroll_id")

        def next_page(scroll_id):
            status, parsed = self.request("POST", "/_search/scroll?filter_path=_scroll_id," + keep,
                                          {"scroll": "1m", "scroll_id": scroll_id})
            if status != 200 or not isinstance(parsed, dict):
                raise StoreDown("OpenSearch failed to continue a scroll (HTTP %d)" % status)
            return parsed

        # One page read ahead (in a helper thread, over its own connection): OpenSearch fetches
        # and sends page n+1 while the caller turns page n into rows, instead of waiting idle
        # for it; the latest index's pages are the report's critical path.
        following = None
        try:
            while True:
                hits = parsed.get("hits", {}).get("hits", [])
                following = None
                if len(hits) >= size and scroll_id:
                    following = self._ahead.submit(next_page, scroll_id)
                yield hits
                if following is None:
                    return
                parsed = following.result()
                following = None
                scroll_id = parsed.get("_scroll_id") or scroll_id
        finally:
            if following is not None:
                wait([following])       # a caller that stopped early: let the read finish first
            if scroll_id:
                self.request("DELETE", "/_search/scroll", {"scroll_id": [scroll_id]})

    def _latest_from_history(self, window, target):
        aggs = {"last": {"top_hits": {"size": 1, "sort": [{"jumbo.start": "desc"}],
                                      "_source": ["jumbo." + f for f in LATEST_SOURCE] + ["jumbo.hops"]}}}
        for bucket in self._composite(self.pmtu, self._filter(window),
                                      [{"path": {"terms": {"field": "jumbo.path"}}}], aggs,
                                      "latest per path", page=1000):
            src = bucket["last"]["hits"]["hits"][0]["_source"].get("jumbo", {})
            hops = src.get("hops") if state_of(src, target) != "jumbo" else None
            yield _latest(src, hops, bucket["doc_count"])

    def trend(self, window, target, interval):
        states = path_state.filters(target)
        body = {"size": 0, "query": self._filter(window), "aggs": {"t": {
            "date_histogram": {"field": "jumbo.start",
                               "calendar_interval": "1w" if interval == "week" else "1d",
                               "format": "yyyy-MM-dd", "min_doc_count": 1},
            "aggs": {
                "capable": {"filter": states["jumbo"]},
                "blackholes": {"filter": states["blackhole"]},
                "unknown": {"filter": states["unknown"]},
                "configured": {"filter": {"range": {"jumbo.local_mtu": {"gte": target}}}},
            }}}}
        parsed = self.search(self.pmtu, body, "trend")
        if parsed is None:
            return []
        return [{"bucket": b["key_as_string"], "results": b["doc_count"],
                 "capable": b["capable"]["doc_count"], "configured": b["configured"]["doc_count"],
                 "blackholes": b["blackholes"]["doc_count"], "unknown": b["unknown"]["doc_count"]}
                for b in parsed["aggregations"]["t"]["buckets"]]

    def evidence(self, window, target):
        return os_evidence.read(self, window, target)

    def gains(self, window):
        if not window.until and self._has_latest_index():
            query = {"bool": {"filter": [{"term": {"test_type": "jumbo-throughput"}},
                                         {"exists": {"field": "gain"}}] + self._range(window, "start")}}
            best = {}
            for values in self._latest_values(query):
                item = dict(zip(_GAIN_FIELDS, _GAIN_VALUES(values)))
                item["start"] = _iso_text(item["start"])
                key = (item["source"], item["dest"], item["ip_version"])
                if key not in best or item["start"] > best[key]["start"]:
                    best[key] = item
            return list(best.values())
        query = {"bool": {"filter": self._range(window) + [
            {"term": {"jumbo.test_type": "jumbo-throughput"}}, {"exists": {"field": "jumbo.gain"}}]}}
        aggs = {"last": {"top_hits": {"size": 1, "sort": [{"jumbo.start": "desc"}], "_source": [
            "jumbo.source", "jumbo.dest", "jumbo.ip_version", "jumbo.gain", "jumbo.throughput_standard",
            "jumbo.throughput_jumbo", "jumbo.start"]}}}
        out = []
        for bucket in self._composite(self.pmtu, query,
                                      [{"path": {"terms": {"field": "jumbo.path"}}}], aggs,
                                      "gains", page=1000):
            src = bucket["last"]["hits"]["hits"][0]["_source"]["jumbo"]
            out.append({k: src.get(k) for k in ("source", "dest", "ip_version", "gain",
                                                "throughput_standard", "throughput_jumbo", "start")})
        return out

    def latency(self, window):
        if not window.until:
            # The jumbo archiver keeps the newest latency result per path in the latest index.
            query = {"bool": {"filter": [{"term": {"test_type": "latency"}},
                                         {"exists": {"field": "rtt"}}] + self._range(window, "start")}}
            # The rows are built inline (no call per field): ~90,000 of them, built under the
            # interpreter lock the main thread needs for the latest results.
            intern = sys.intern
            out = []
            for values in self._latest_values(query):
                source, dest, rtt, loss = _LATENCY_VALUES(values)
                out.append((intern(source) if isinstance(source, str) else source,
                            intern(dest) if isinstance(dest, str) else dest, None, None,
                            rtt, loss or 0.0, 1))
            if out:
                return out
        # A past window (or no latest index): the newest jumbo latency record of each
        # path in it, from the history.
        query = {"bool": {"filter": self._range(window) + [
            {"term": {"jumbo.test_type": "latency"}}, {"exists": {"field": "jumbo.rtt"}}]}}
        aggs = {"last": {"top_hits": {"size": 1, "sort": [{"jumbo.start": "desc"}], "_source": [
            "jumbo.source", "jumbo.dest", "jumbo.rtt", "jumbo.loss"]}}}
        out = []
        for bucket in self._composite(self.pmtu, query,
                                      [{"path": {"terms": {"field": "jumbo.path"}}}], aggs,
                                      "latency", page=1000):
            src = bucket["last"]["hits"]["hits"][0]["_source"]["jumbo"]
            out.append((_intern(src.get("source")), _intern(src.get("dest")), None, None,
                        src.get("rtt"), src.get("loss") or 0.0, 1))
        if out:
            return out
        # perfSONAR's own latency documents (Logstash layout): averaged per address pair.
        query = {"bool": {"filter": self._range(window, "@timestamp")}}
        sources = [{"s": {"terms": {"field": "meta.source.ip"}}},
                   {"d": {"terms": {"field": "meta.destination.ip"}}}]
        aggs = {"rtt": {"avg": {"field": "jumbo.rtt"}},
                "loss": {"avg": {"field": "jumbo.loss"}},
                "owd": {"avg": {"field": "result.latency.median"}},
                "ploss": {"avg": {"field": "result.packets.loss"}}}
        out = []
        for b in self._composite(self.prefix + "pscheduler_latency*", query, sources, aggs, "latency"):
            rtt = b["rtt"]["value"]
            if rtt is None and b["owd"]["value"] is not None:
                rtt = 2 * b["owd"]["value"] / 1000.0
            loss = b["loss"]["value"]
            if loss is None:
                loss = b["ploss"]["value"]
            if rtt is None:
                continue
            out.append((None, None, b["key"]["s"], b["key"]["d"], rtt, loss or 0.0, b["doc_count"]))
        return out

    def changes(self, window, target, limit, flap):
        return self.history(window, target, "day", limit, flap, None)[1]

    def trend_apart(self, window):
        return True

    def history(self, window, target, interval, limit, flap, latest, trend=None):
        if latest is None:
            latest = list(self.latest(window, target))
        if trend is None:
            trend = self.trend(window, target, interval)
        return trend, self._changes(window, target, limit, flap, latest)

    def _candidates(self, window, target, latest):
        """Paths with a result in another state than their latest one, found in the store:
        for each latest state X, the documents of the paths whose latest state is X that are
        not in state X, aggregated on the path (composite). The largest group is written as
        'none of the other paths' so the request stays small."""
        groups = {}
        for row in latest:
            groups.setdefault(state_of(row, target), []).append(
                "%s|%s|%s|pmtu" % (row.source, row.dest, row.ip_version))
        if not groups:
            return []
        states = path_state.filters(target)
        biggest = max(groups, key=lambda k: len(groups[k]))
        clauses = []
        others = []
        for st, paths in groups.items():
            if st == biggest:
                continue
            others.extend(paths)
            for i in range(0, len(paths), 60000):
                clauses.append({"bool": {"filter": [{"terms": {"jumbo.path": paths[i:i + 60000]}}],
                                         "must_not": [states[st]]}})
        if len(others) <= 60000:
            must_not = [states[biggest]]
            if others:
                must_not.append({"terms": {"jumbo.path": others}})
            clauses.append({"bool": {"must_not": must_not}})
        else:   # very large meshes: the biggest group spelled out in chunks too
            paths = groups[biggest]
            for i in range(0, len(paths), 60000):
                clauses.append({"bool": {"filter": [{"terms": {"jumbo.path": paths[i:i + 60000]}}],
                                         "must_not": [states[biggest]]}})
        found = set()
        for clause in clauses:
            query = self._filter(window)
            query["bool"]["filter"].append(clause)
            query["bool"]["must_not"] = [states["failed"]]
            for bucket in self._composite(self.pmtu, query, [{"p": {"terms": {"field": "jumbo.path"}}}],
                                          {}, "changed paths"):
                found.add(bucket["key"]["p"])
        return sorted(found)

    def _changes(self, window, target, limit, flap, latest):
        changed = self._candidates(window, target, latest)
        # Date the changes: read back the history of the paths that changed (and only those).
        events, counts = [], {}
        for i in range(0, min(len(changed), MAX_CHANGED_HISTORY), 500):
            chunk = changed[i:i + 500]
            query = {"bool": {"filter": self._range(window) + [{"terms": {"jumbo.path": chunk}}]}}
            prev = {}
            after = None
            while True:
                body = {"size": PAGE, "query": query, "track_total_hits": False,
                        "sort": [{"jumbo.path": "asc"}, {"jumbo.start": "asc"}, {"jumbo.id": "asc"}],
                        "_source": ["jumbo." + f for f in ("path", "source", "dest", "ip_version",
                                                           "start", "succeeded", "path_mtu", "pmtud",
                                                           "partial", "reverse_path_mtu",
                                                           "reverse_pmtud")]}
                if after:
                    body["search_after"] = after
                parsed = self.search(self.pmtu, body, "change history")
                hits = parsed.get("hits", {}).get("hits", []) if parsed else []
                for hit in hits:
                    src = hit["_source"]["jumbo"]
                    st = state_of(src, target)
                    if st == "failed":
                        continue
                    key = src["path"]
                    before = prev.get(key)
                    prev[key] = st
                    if before is not None and before != st:
                        events.append({"source": src["source"], "dest": src["dest"],
                                       "ip_version": src["ip_version"], "start": _iso_text(src["start"]),
                                       "from": before, "to": st})
                        c = counts.setdefault(key, [src["source"], src["dest"], src["ip_version"], 0, None])
                        c[3] += 1
                        c[4] = _iso_text(src["start"])
                if len(hits) < PAGE:
                    break
                after = hits[-1]["sort"]
        flapping = [{"source": c[0], "dest": c[1], "ip_version": c[2], "changes": c[3], "last_change": c[4]}
                    for c in counts.values() if c[3] >= flap]
        flapping.sort(key=lambda f: (-f["changes"], f["source"], f["dest"]))
        return {"changes": _tiebreak(events)[:limit], "changed_paths": len(counts),
                "total_changes": len(events), "flapping": flapping[:limit]}


def _tiebreak(events):
    return sorted(events, key=lambda e: (_neg(e["start"]), e["source"], e["dest"]))


def _neg(text):
    return tuple(-ord(ch) for ch in text)


def _iso(agg):
    text = agg.get("value_as_string")
    if text:
        return _iso_text(text)
    return None


def _iso_text(text):
    """OpenSearch dates come back as written or with millis: normalise to second precision."""
    if text and text.endswith(".000Z"):
        return text[:-5] + "Z"
    return text


def _row_latest(values):
    """A Latest from a pmtu document's row values, with its localisation values after them
    when they were read (LOCATED)."""
    intern = sys.intern
    (source, dest, ipv, ssite, dsite, start, ok, mtu, local, pmtud, partial, reverse_mtu,
     reverse_pmtud) = _PMTU_VALUES(values)
    if len(values) > _ROW_LENGTH:
        source_ip, dest_ip, bh_ttl, bh_ip, bh_size, hops = values[_ROW_LENGTH:]
        source_ip, dest_ip, hops = _intern(source_ip), _intern(dest_ip), _compact_hops(hops)
    else:
        source_ip = dest_ip = bh_ttl = bh_ip = bh_size = hops = None
    return Latest(
        intern(source) if source else source, intern(dest) if dest else dest, ipv, source_ip,
        dest_ip, intern(ssite) if ssite else ssite, intern(dsite) if dsite else dsite,
        _iso_text(start), bool(ok), None, mtu, local, intern(pmtud) if pmtud else pmtud,
        bool(partial), bh_ttl, bh_ip, bh_size, reverse_mtu,
        intern(reverse_pmtud) if reverse_pmtud else reverse_pmtud, hops, None)


def _values(*names):
    """A getter of `names` (in that order) from a list of LATEST_ROW_FIELDS values."""
    return itemgetter(*(LATEST_ROW_FIELDS.index(name) for name in names))


_PMTU_VALUES = _values("source", "dest", "ip_version", "source_site", "dest_site", "start",
                       "succeeded", "path_mtu", "local_mtu", "pmtud", "partial",
                       "reverse_path_mtu", "reverse_pmtud")
_GAIN_FIELDS = ("source", "dest", "ip_version", "gain", "throughput_standard",
                "throughput_jumbo", "start")
_GAIN_VALUES = _values(*_GAIN_FIELDS)
_LATENCY_VALUES = _values("source", "dest", "rtt", "loss")


def _intern(text):
    """Host, site and enum strings repeat across 100,000 paths: keep one copy of each."""
    return sys.intern(text) if isinstance(text, str) else text


def _compact_hops(hops):
    if not hops:
        return None
    return [(h.get("ttl"), _intern(h.get("ip")), h.get("mtu")) for h in hops if isinstance(h, dict)]


def _latest(src, hops, results):
    return Latest(
        src.get("source"), src.get("dest"), src.get("ip_version"), src.get("source_ip"),
        src.get("dest_ip"), src.get("source_site"), src.get("dest_site"), _iso_text(src.get("start")),
        bool(src.get("succeeded")), src.get("error"), src.get("path_mtu"), src.get("local_mtu"),
        src.get("pmtud"), bool(src.get("partial")), src.get("blackhole_ttl"), src.get("blackhole_ip"),
        src.get("blackhole_size"), src.get("reverse_path_mtu"), src.get("reverse_pmtud"), hops, results)
