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
Runs that reached the archive only through perfSONAR's http archiver and Logstash
(pscheduler_pmtu, pscheduler_jumbo-throughput) are read by jumbo.archive.opensearch.streams,
which decides before the report starts whether this reader alone answers.

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

from .. import path_state
from ..query_base import Queries, latest_states, state_of
from . import changes as path_changes
from . import evidence as os_evidence
from .layout import LATEST_PACKS
from .rows import (GAIN_FIELDS, GAIN_VALUES, LATENCY_VALUES, iso_text, iso_value,
                   latest_from_source, row_latest, shared)
from ..errors import TooManyBuckets
from .search import SearchClient

# The packed fields read: every path's row, and the localisation values after it.
ROW = LATEST_PACKS[:1]
LOCATED = LATEST_PACKS


# Paths per page of the jumbo runs per path where an archive refuses the partitions' size
# (search.max_buckets set lower): each page is an aggregation over the window's whole
# history, so fewer, larger pages (460,000 paths over 5M results: 60 s at 10,000 a page
# against 101 s at 1,000, load 50-60).
AGREEMENT_PAGE = 10000

LATEST_SOURCE = ["source", "dest", "ip_version", "source_ip", "dest_ip", "source_site",
                 "dest_site", "start", "succeeded", "error", "path_mtu", "local_mtu", "pmtud",
                 "partial", "blackhole_ttl", "blackhole_ip", "blackhole_size",
                 "reverse_path_mtu", "reverse_pmtud"]


class OpenSearchQueries(SearchClient, Queries):
    name = "opensearch"
    answers_elsewhere = True    # its aggregations are the archive's work

    # -- the questions ----------------------------------------------------------------------
    def count(self, window):
        body = {"size": 0, "track_total_hits": True, "query": self.window_filter(window),
                "aggs": {"first": {"min": {"field": "jumbo.start"}},
                         "last": {"max": {"field": "jumbo.start"}}}}
        parsed = self.search(self.pmtu, body, "count")
        if parsed is None:
            return 0, None, None
        n = parsed["hits"]["total"]["value"]
        if not n:
            return 0, None, None
        return (n, iso_value(parsed["aggregations"]["first"]),
                iso_value(parsed["aggregations"]["last"]))

    def latest(self, window, target):
        if window.until or not self.has_latest_index():
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
        pmtu = [{"term": {"test_type": "pmtu"}}] + self.window_range(window, "start")
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
                    extra.append(row_latest(values))
            except BaseException as err:  # raised in the caller's thread below
                failure.append(err)
        thread = threading.Thread(target=read_failing, daemon=True)
        thread.start()
        try:
            for values in self._latest_values(rest):
                yield row_latest(values)
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
        for hits in self.scroll_pages(self.latest_index, packed, fields=fields):
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
        for hit in self.scroll(self.latest_index, unpacked, source=names):
            src = hit.get("_source", {})
            yield [src.get(name) for name in names]

    def _latest_from_history(self, window, target):
        aggs = {"last": {"top_hits": {"size": 1, "sort": [{"jumbo.start": "desc"}],
                                      "_source": ["jumbo." + f for f in LATEST_SOURCE] + ["jumbo.hops"]}}}
        for bucket in self.composite(self.pmtu, self.window_filter(window),
                                      [{"path": {"terms": {"field": "jumbo.path"}}}], aggs,
                                      "latest per path", page=1000):
            src = bucket["last"]["hits"]["hits"][0]["_source"].get("jumbo", {})
            hops = src.get("hops") if state_of(src, target) != "jumbo" else None
            yield latest_from_source(src, hops, bucket["doc_count"])

    def trend(self, window, target, interval):
        states = path_state.filters(target)
        body = {"size": 0, "query": self.window_filter(window), "aggs": {"t": {
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

    def agreement_rows(self, window, target):
        query = self.window_filter(window)
        query["bool"]["filter"].append(path_state.filters(target)["jumbo"])
        # One stats per field (its sum and how many runs hold it): 13 % less of the archive's
        # time than a sum and a value_count each.
        aggs = {"f": {"stats": {"field": "jumbo.flows"}},
                "a": {"stats": {"field": "jumbo.flows_asked"}}}
        try:
            buckets = self.terms_partitions(
                self.pmtu, query, "jumbo.path", aggs, "jumbo runs per path",
                self._paths_about(query), keep=("f.sum", "f.count", "a.sum", "a.count"))
            yield from _path_counts(buckets, lambda b: b["key"])
        except TooManyBuckets:
            # An archive whose search.max_buckets is set below the partitions' size: page by
            # page (a path already counted is counted again to the same value).
            buckets = self.composite(self.pmtu, query, [{"path": {"terms": {"field": "jumbo.path"}}}],
                                     aggs, "jumbo runs per path", page=AGREEMENT_PAGE)
            yield from _path_counts(buckets, lambda b: b["key"]["path"])

    def _paths_about(self, query):
        """About how many paths `query` spans, for the partitions of a question per path: the
        latest index's pmtu paths (a count, milliseconds) where it is kept, else the history's
        estimate (a pass). A low guess costs a partition asked again, never an answer."""
        if self.has_latest_index():
            status, parsed = self.request("POST", "/%s/_count" % self.latest_index,
                                          {"query": {"term": {"test_type": "pmtu"}}})
            n = parsed.get("count") if status == 200 and isinstance(parsed, dict) else None
        else:
            parsed = self.search(self.pmtu, {"size": 0, "query": query, "aggs": {"n": {
                "cardinality": {"field": "jumbo.path", "precision_threshold": 1000}}}},
                "paths of the jumbo runs")
            n = ((parsed or {}).get("aggregations", {}).get("n") or {}).get("value")
        return n if isinstance(n, int) and not isinstance(n, bool) and 0 <= n < 2 ** 31 else 0

    def gains(self, window):
        if not window.until and self.has_latest_index():
            query = {"bool": {"filter": [{"term": {"test_type": "jumbo-throughput"}},
                                         {"exists": {"field": "gain"}}] + self.window_range(window, "start")}}
            best = {}
            for values in self._latest_values(query):
                item = dict(zip(GAIN_FIELDS, GAIN_VALUES(values)))
                item["start"] = iso_text(item["start"])
                key = (item["source"], item["dest"], item["ip_version"])
                if key not in best or item["start"] > best[key]["start"]:
                    best[key] = item
            return list(best.values())
        query = {"bool": {"filter": self.window_range(window) + [
            {"term": {"jumbo.test_type": "jumbo-throughput"}}, {"exists": {"field": "jumbo.gain"}}]}}
        aggs = {"last": {"top_hits": {"size": 1, "sort": [{"jumbo.start": "desc"}], "_source": [
            "jumbo.source", "jumbo.dest", "jumbo.ip_version", "jumbo.gain", "jumbo.throughput_standard",
            "jumbo.throughput_jumbo", "jumbo.start"]}}}
        out = []
        for bucket in self.composite(self.pmtu, query,
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
                                         {"exists": {"field": "rtt"}}] + self.window_range(window, "start")}}
            # The rows are built inline (no call per field): ~90,000 of them, built under the
            # interpreter lock the main thread needs for the latest results.
            intern = sys.intern
            out = []
            for values in self._latest_values(query):
                source, dest, rtt, loss = LATENCY_VALUES(values)
                out.append((intern(source) if isinstance(source, str) else source,
                            intern(dest) if isinstance(dest, str) else dest, None, None,
                            rtt, loss or 0.0, 1))
            if out:
                return out
        # A past window (or no latest index): the newest jumbo latency record of each
        # path in it, from the history.
        query = {"bool": {"filter": self.window_range(window) + [
            {"term": {"jumbo.test_type": "latency"}}, {"exists": {"field": "jumbo.rtt"}}]}}
        aggs = {"last": {"top_hits": {"size": 1, "sort": [{"jumbo.start": "desc"}], "_source": [
            "jumbo.source", "jumbo.dest", "jumbo.rtt", "jumbo.loss"]}}}
        out = []
        for bucket in self.composite(self.pmtu, query,
                                      [{"path": {"terms": {"field": "jumbo.path"}}}], aggs,
                                      "latency", page=1000):
            src = bucket["last"]["hits"]["hits"][0]["_source"]["jumbo"]
            out.append((shared(src.get("source")), shared(src.get("dest")), None, None,
                        src.get("rtt"), src.get("loss") or 0.0, 1))
        if out:
            return out
        # perfSONAR's own latency documents (Logstash layout): averaged per address pair.
        query = {"bool": {"filter": self.window_range(window, "@timestamp")}}
        sources = [{"s": {"terms": {"field": "meta.source.ip"}}},
                   {"d": {"terms": {"field": "meta.destination.ip"}}}]
        aggs = {"rtt": {"avg": {"field": "jumbo.rtt"}},
                "loss": {"avg": {"field": "jumbo.loss"}},
                "owd": {"avg": {"field": "result.latency.median"}},
                "ploss": {"avg": {"field": "result.packets.loss"}}}
        out = []
        for b in self.composite(self.prefix + "pscheduler_latency*", query, sources, aggs, "latency"):
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
            latest = latest_states(self.latest(window, target), target)
        if trend is None:
            trend = self.trend(window, target, interval)
        return trend, path_changes.changes(self, window, target, limit, flap, latest)


def _path_counts(buckets, key_of):
    """(path, (runs, flows, flows_runs, flows_asked, asked_runs)) of each bucket of the jumbo
    runs per path, the path named by key_of(bucket). An archive's answer is read as hostile:
    a bucket counts only with a string key and counts that are whole, non-negative numbers
    under 2**53. Few distinct counts recur over many paths (a mesh runs every path alike):
    each distinct tuple is checked, converted and held once."""
    made = {}
    for b in buckets:
        try:
            key, f, a = key_of(b), b["f"], b["a"]
            counts = (b["doc_count"], f["sum"], f["count"], a["sum"], a["count"])
        except (KeyError, TypeError, IndexError):
            continue
        if key.__class__ is not str or bool in set(map(type, counts)):
            continue   # (True == 1: a boolean would find 1's entry below)
        found = made.get(counts)
        if found is None:
            ok = all(isinstance(x, (int, float)) and 0 <= x < 2 ** 53 for x in counts)
            found = made[counts] = tuple(int(x) for x in counts) if ok else False
        if found:
            yield key, found
