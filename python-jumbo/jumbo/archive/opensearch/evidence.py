"""Evidence across runs (jumbo.archive.evidence) from the OpenSearch history index.

Two bounded aggregations over the window's pmtu documents, no script (a bare OpenSearch has
no painless):
  1. the sightings: the documents with `partial` true, composite on the path; per path their
     count, first and last start, and the newest SIGHTINGS of them (top_hits, a few fields of
     _source: flows, blackhole_flows, the hop and size), from which the smallest failing
     share and the hop are taken. Its cost follows the sightings, found through the
     `partial` term, not the history.
  2. per CHUNK sighted paths, one request: their runs in the window (terms on the path), and
     the flows of their clean runs after each one's last sighting (a filter of one clause per
     path: that path, started after its last sighting; then a sum of `flows`).
"""

from .. import evidence

SIGHTINGS = 100     # sightings per path read for the share and the hop (the newest ones)
PAGE = 100          # paths per composite page of the sightings (x SIGHTINGS hits at most)
CHUNK = 200         # paths per request of the second step (2 query clauses each, under
                    # OpenSearch's default limit of 1024 clauses per query)
_SOURCE = ["jumbo." + f for f in ("flows", "blackhole_flows", "blackhole_ttl", "blackhole_ip",
                                  "blackhole_size")]


def _iso(agg):
    text = agg.get("value_as_string")
    if text and text.endswith(".000Z"):
        return text[:-5] + "Z"
    return text


def read(queries, window, target):
    """{path key: Evidence} of the pmtu paths sighted in `window`."""
    query = queries.window_filter(window)
    query["bool"]["filter"].append({"term": {"jumbo.partial": True}})
    aggs = {"first": {"min": {"field": "jumbo.start"}},
            "last": {"max": {"field": "jumbo.start"}},
            "newest": {"top_hits": {"size": SIGHTINGS, "sort": [{"jumbo.start": "desc"}],
                                    "_source": _SOURCE}}}
    sighted = {}
    for bucket in queries.composite(queries.pmtu, query,
                                     [{"p": {"terms": {"field": "jumbo.path"}}}], aggs,
                                     "partial black holes", page=PAGE):
        runs = [hit["_source"].get("jumbo", {}) for hit in bucket["newest"]["hits"]["hits"]]
        share = min(evidence.run_share(r.get("flows"), r.get("blackhole_flows")) for r in runs)
        located = [r for r in runs if r.get("blackhole_ttl") is not None
                   or r.get("blackhole_ip") is not None]
        sized = [r for r in runs if r.get("blackhole_size") is not None]
        sighted[bucket["key"]["p"]] = (
            bucket["doc_count"], _iso(bucket["first"]), _iso(bucket["last"]),
            bucket["last"]["value"], share, located[0] if located else {},
            sized[0].get("blackhole_size") if sized else None)
    out = {}
    paths = sorted(sighted)
    for i in range(0, len(paths), CHUNK):
        chunk = paths[i:i + CHUNK]
        after = [{"bool": {"filter": [
            {"term": {"jumbo.path": path}},
            {"range": {"jumbo.start": {"gt": int(sighted[path][3]), "format": "epoch_millis"}}}]}}
            for path in chunk]
        clean = evidence.dsl_clean(target)
        clean["bool"]["should"] = after
        clean["bool"]["minimum_should_match"] = 1
        query = queries.window_filter(window)
        query["bool"]["filter"].append({"terms": {"jumbo.path": chunk}})
        body = {"size": 0, "query": query, "aggs": {
            "runs": {"terms": {"field": "jumbo.path", "size": len(chunk)}},
            "clean": {"filter": clean, "aggs": {"p": {
                "terms": {"field": "jumbo.path", "size": len(chunk)},
                "aggs": {"flows": {"sum": {"field": "jumbo.flows", "missing": 1}}}}}}}}
        parsed = queries.search(queries.pmtu, body, "partial black holes' runs")
        aggregations = (parsed or {}).get("aggregations", {})
        runs = {b["key"]: b["doc_count"] for b in aggregations.get("runs", {}).get("buckets", [])}
        flows = {b["key"]: int(b["flows"]["value"])
                 for b in aggregations.get("clean", {}).get("p", {}).get("buckets", [])}
        for path in chunk:
            seen, first, last, _ms, share, hop, size = sighted[path]
            out[path] = evidence.Evidence(seen, runs.get(path, seen), first, last, share,
                                          hop.get("blackhole_ttl"), hop.get("blackhole_ip"),
                                          size, flows.get(path, 0))
    return out
