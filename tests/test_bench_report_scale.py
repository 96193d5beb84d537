"""bench/report_scale.py's OpenSearch loader, whose bulk requests go out from sender threads
while it encodes the next batch: every record reaches the history and every path-family its
latest document, however the batches fall (batches of 7 over 202 records: the last one short),
and the store is marked done only then."""

import json
import urllib.request

from bench import report_scale
from opensearch_fixture import drop_prefix
from jumbo.archive.stores import open_store


def _count(base, index):
    with urllib.request.urlopen("%s/%s/_count" % (base, index), timeout=60) as resp:
        return json.loads(resp.read())["count"]


def test_the_loader_stores_every_record_and_every_latest_path(opensearch_url):
    hosts, results = 10, 202
    prefix = "benchscale%dx%d_" % (hosts, results)
    store = open_store("%s/?prefix=%s" % (opensearch_url, prefix))
    drop_prefix(store, prefix)
    try:
        url = report_scale.opensearch_store(opensearch_url, hosts, results, batch=7)
        assert url.endswith("prefix=" + prefix)
        assert _count(opensearch_url, prefix + "jumbo_history") == results
        assert _count(opensearch_url, prefix + "jumbo_latest") == 2 * hosts * (hosts - 1)
        assert report_scale._http("%s/%sbench_done/_doc/done" % (opensearch_url, prefix))[0] == 200
    finally:
        drop_prefix(open_store("%s/?prefix=%s" % (opensearch_url, prefix)), prefix)
