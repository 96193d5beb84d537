"""The OpenSearch reader's plumbing: one client per reader thread (the store's HTTP client),
searches whose failures read as the report's StoreDown, a window as a filter, composite
aggregations page by page, and scrolls that read their next page ahead."""

import threading
from concurrent.futures import ThreadPoolExecutor, wait

from ..errors import ReportError, StoreDown, StoreError
from ..urls import check_url
from .client import OpenSearchClient

PAGE = 5000
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
