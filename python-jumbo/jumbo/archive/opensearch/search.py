"""The OpenSearch reader's plumbing: one client per reader thread (the store's HTTP client),
searches whose failures read as the report's StoreDown, a window as a filter, composite
aggregations page by page, terms aggregations by hash partition, and scrolls that read their
next page ahead."""

import threading
from concurrent.futures import ThreadPoolExecutor, wait

from ..errors import ReportError, StoreDown, StoreError, TooManyBuckets
from ..urls import check_url
from .client import OpenSearchClient

PAGE = 5000
# Terms per partition of a partitioned terms aggregation, and the size each partition may
# answer with: the field's hash spreads terms evenly, so a partition of about PARTITION terms
# stays far below PARTITION_SIZE, itself under search.max_buckets (65,535 by default).
PARTITION = 40000
PARTITION_SIZE = 60000
SCROLL_PAGE = 10000   # hits per scroll page
TIMEOUT = 60.0


class SearchClient(object):
    """Searches over the archive at `url` (see jumbo.archive.opensearch.reader)."""

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
            client = self._local.client = OpenSearchClient.from_url(self._url, **self._options)
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

    def search(self, index, body, what, keep=None):
        """The parsed answer of a search (None for no index); `keep` is a filter_path: what
        OpenSearch sends back, the rest of its answer not encoded, sent nor parsed."""
        status, parsed = self.request(
            "POST", "/%s/_search?ignore_unavailable=true&allow_no_indices=true%s"
            % (index, "&filter_path=" + keep if keep else ""), body)
        if status == 404:
            return None
        if status != 200 or not isinstance(parsed, dict):
            reason = ""
            if isinstance(parsed, dict) and isinstance(parsed.get("error"), dict):
                err = parsed["error"]
                root = (err.get("root_cause") or [{}])[0]
                cause = err.get("caused_by") if isinstance(err.get("caused_by"), dict) else {}
                reason = ": %s" % (root.get("reason") or err.get("reason") or cause.get("reason"))
            if status in (401, 403):
                raise StoreDown("OpenSearch refused the %s query (HTTP %d)%s" % (what, status, reason))
            if "too_many_buckets_exception" in _cause_types(parsed):
                raise TooManyBuckets("OpenSearch refused the %s query's buckets (HTTP %d)%s"
                                     % (what, status, reason))
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
    def window_range(self, window, field="jumbo.start"):
        if not window.since and not window.until:
            return []
        rng = {"format": "strict_date_optional_time"}
        if window.since:
            rng["gte"] = window.since
        if window.until:
            rng["lt"] = window.until
        return [{"range": {field: rng}}]

    def window_filter(self, window, test_type="pmtu"):
        clauses = self.window_range(window)
        if test_type:
            clauses.append({"term": {"jumbo.test_type": test_type}})
        if window.hosts is not None:
            hosts = list(window.hosts)
            clauses.append({"bool": {"minimum_should_match": 1, "should": [
                {"terms": {"jumbo.source": hosts}}, {"terms": {"jumbo.dest": hosts}}]}})
        return {"bool": {"filter": clauses}}

    def composite(self, index, query, sources, aggs, what, page=PAGE):
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

    def terms_partitions(self, index, query, field, aggs, what, terms, keep=()):
        """Every bucket (key, doc_count and `aggs`) of a terms aggregation on `field` under
        `query`, about `terms` distinct values in all: in hash partitions of about PARTITION
        terms, a pass over the matching documents each, where a composite aggregation makes a
        pass per page (114,716 paths of 1M results: 0.45 s against 0.6 s of the archive's
        time). `keep` names the bucket members sent back. A partition cut short (more terms
        than PARTITION_SIZE) is asked again as its two halves: the terms whose hash is p
        modulo P are those that are p or p + P modulo 2P."""
        fields = ",".join("aggregations.c.buckets." + name for name in ("key", "doc_count") + tuple(keep))
        filter_path = "aggregations.c.sum_other_doc_count," + fields
        first = max(1, -(-int(terms) // PARTITION))
        todo = [(part, first) for part in range(first)]
        while todo:
            part, parts = todo.pop(0)
            body = {"size": 0, "query": query, "aggs": {"c": {
                "terms": {"field": field, "size": PARTITION_SIZE,
                          "include": {"partition": part, "num_partitions": parts}},
                "aggs": aggs}}}
            parsed = self.search(index, body, what, keep=filter_path)
            if parsed is None:
                return
            agg = parsed["aggregations"].get("c") if isinstance(parsed["aggregations"], dict) else None
            other = agg.get("sum_other_doc_count") if isinstance(agg, dict) else None
            if (not isinstance(other, int) or isinstance(other, bool) or other < 0
                    or not isinstance(agg.get("buckets", []), list)):
                raise StoreDown("OpenSearch answered the %s query without its buckets" % what)
            if other:
                # Bounded: a store that keeps cutting (or says so falsely, or a guess of the
                # terms far too low) is not asked on; the caller may ask page by page instead.
                if parts >= 16 * first:
                    raise TooManyBuckets("OpenSearch cut the %s query's partitions short" % what)
                todo += [(part, parts * 2), (part + parts, parts * 2)]
                continue
            yield from agg.get("buckets", ())

    def has_latest_index(self):
        status, _ = self.request("HEAD", "/" + self.latest_index)
        return status == 200

    def scroll(self, index, query, fields=None, source=None):
        """Every hit of `query`, one by one (see scroll_pages)."""
        for hits in self.scroll_pages(index, query, fields, source):
            yield from hits

    def scroll_pages(self, index, query, fields=None, source=None):
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


def _cause_types(parsed):
    """The error types of an OpenSearch error answer: its own, its root causes', the chain of
    its caused_by (bounded: an answer is read as hostile)."""
    err = parsed.get("error") if isinstance(parsed, dict) else None
    found = []
    if not isinstance(err, dict):
        return found
    causes = err.get("root_cause") if isinstance(err.get("root_cause"), list) else []
    chain = [err] + causes[:8]
    while chain and len(found) < 32:
        item = chain.pop()
        if isinstance(item, dict):
            found.append(item.get("type"))
            chain.append(item.get("caused_by"))
    return found
