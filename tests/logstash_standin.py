"""A STAND-IN for perfSONAR's Logstash pipeline (Logstash itself cannot be had here): it stores
into an archive the documents Logstash would store for results the stock `http` archiver posts.

The document is jumbo.archive.opensearch.logstash.logstash_document(), which is written from
perfsonar/logstash 342244c pipeline/02-pscheduler_common.conf, 03-normalize_endpoints.conf,
04-iso8601-duration.conf and ruby/pscheduler_test_checksum.rb (see its docstring), plus what
only Logstash knows, from the same pipeline:
  * 01-inputs.conf: the `http` input (ECS disabled) adds a top-level `host`, the client's
    address (the Apache proxy in front of it: 127.0.0.1), which no later filter removes;
  * `@timestamp` is the time Logstash received the event (no `date` filter), not the run's;
  * 99-outputs.conf: `create` into pscheduler_<test.type> with no document_id, so OpenSearch
    picks the `_id` and a retried post is stored twice.
The http archiver posts the result object (the archiver envelope's `result`).
"""

import json

from jumbo.archive.opensearch.logstash import envelope_hrefs, logstash_document

PROXY = "127.0.0.1"


def logstash_event(envelope, received):
    """The document the pipeline stores for the archiver envelope `envelope` (the http
    archiver posts its `result`), received at `received` (ISO time)."""
    doc = logstash_document(envelope["result"], envelope_hrefs(envelope))
    doc["host"] = PROXY
    doc["@timestamp"] = received
    return doc


def post(store, prefix, envelopes, received="2026-05-24T00:00:00Z"):
    """Store the pipeline's documents for `envelopes` in their pscheduler_<type> streams of the
    archive `store` talks to, as 99-outputs.conf does (bulk `create`, ids chosen by OpenSearch)."""
    lines = []
    for envelope in envelopes:
        doc = logstash_event(envelope, received)
        lines.append(json.dumps({"create": {"_index": prefix + "pscheduler_" + doc["test"]["type"]}}))
        lines.append(json.dumps(doc))
    status, parsed = store.request("POST", "/_bulk?refresh=true", "\n".join(lines) + "\n",
                                   ndjson=True)
    assert status == 200 and not parsed.get("errors"), str(parsed)[:2000]
