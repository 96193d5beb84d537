"""perfSONAR's own side of an archive, composed here for tests (CI has no network).

What it reproduces, read from upstream (nothing copied):
  * perfSONAR's index template: perfsonar/archive c7e3b10,
    perfsonar-archive/perfsonar-archive/config/index_template-pscheduler.json, installed by
    pselastic_secure_pos.sh as `pscheduler_default_policy`: pattern pscheduler_*, no priority,
    data stream, 1 shard / 0 replicas, alias `pscheduler`, four dynamic templates, no properties.
  * the documents perfSONAR's Logstash pipeline writes: perfsonar/logstash 342244c,
    perfsonar-logstash/perfsonar-logstash/pipeline/02-pscheduler_common.conf (pscheduler.*,
    schedule from task.schedule), 03 (meta.* from DNS; here: as if resolution worked),
    04 (pscheduler.duration, schedule.slip/repeat in seconds), 05 (GeoIP), 06-result_*.conf
    (per-type result flattening and test.spec durations in seconds), 99-outputs.conf
    (`create` into pscheduler_<test.type>, ids chosen by OpenSearch).
  * perfSONAR dashboard queries: the pair explorer of perfsonar/grafana 7792e6c and the
    pSConfig Grafana agent's matrix (perfsonar/psconfig 3ba9927 templates/*.j2) group on
    `.keyword` sub-fields of dynamic string fields and read the 06-result_* fields.
"""

import copy
import hashlib
import json
import os

from jumbo.archive.opensearch.logstash import canonical_json

PERFSONAR_TEMPLATE_NAME = "pscheduler_default_policy"
PERFSONAR_TYPES = ("throughput", "trace", "latency", "latencybg", "rtt")


# A checkout of github.com/perfsonar/archive: when set, the tests seed perfSONAR's own template
# file instead of the composition below (a maintainer's check: scripts/check-upstream-archive.sh).
UPSTREAM_TEMPLATE = "perfsonar-archive/perfsonar-archive/config/index_template-pscheduler.json"


def upstream_template_path():
    src = os.environ.get("PERFSONAR_ARCHIVE_SRC")
    return os.path.join(src, UPSTREAM_TEMPLATE) if src else None


def perfsonar_template(prefix=""):
    path = upstream_template_path()
    if path:
        with open(path) as handle:
            template = json.load(handle)
        template["index_patterns"] = [prefix + p for p in template["index_patterns"]]
        aliases = template["template"].get("aliases") or {}
        template["template"]["aliases"] = dict((prefix + a, v) for a, v in aliases.items())
        return template
    return composed_template(prefix)


def composed_template(prefix=""):
    return {
        "index_patterns": [prefix + "pscheduler_*"],
        "data_stream": {},
        "template": {
            "settings": {"number_of_shards": 1, "number_of_replicas": 0},
            "aliases": {prefix + "pscheduler": {}},
            "mappings": {
                "_source": {}, "_meta": {},
                "dynamic_templates": [
                    {"ip_addresses": {"match": "ip", "mapping": {"type": "ip"}}},
                    {"histograms": {"match": "histogram",
                                    "mapping": {"type": "object", "enabled": False}}},
                    {"json_unparsed": {"match": "json",
                                       "mapping": {"type": "object", "enabled": False}}},
                    {"location": {"path_match": "*.geo.location",
                                  "mapping": {"type": "geo_point"}}},
                ],
                "properties": {},
            },
        },
    }


HOSTS = {"ps-a.example.org": "198.18.0.1", "ps-b.example.org": "198.18.0.2"}


def _side(host, lat):
    return {"ip": HOSTS[host], "hostname": host,
            "geo": {"location": {"lat": lat, "lon": 6.05}, "city_name": "Geneva",
                    "country_name": "Switzerland", "continent_name": "Europe",
                    "as": {"number": 64500}},
            "as": {"organization": "Example Research Network"}}


def logstash_document(test_type, n, source="ps-a.example.org", dest="ps-b.example.org"):
    """The document Logstash stores for run `n` of a `test_type` task (fixed values)."""
    task = "%08d-0000-4000-8000-%012d" % (n, 1 + len(test_type))
    run = "%08d-1111-4000-8000-%012d" % (n, 7)
    start = "2026-05-20T%02d:%02d:00+00:00" % (8 + n // 60, n % 60)
    task_href = "https://%s/pscheduler/tasks/%s" % (source, task)
    spec = {"schema": 1, "source": source, "dest": dest}
    tool = {"throughput": "iperf3", "trace": "tracepath", "latency": "owping",
            "latencybg": "powstream", "rtt": "ping"}[test_type]
    if test_type == "throughput":
        spec.update({"duration": 10.0, "omit": 2.0})              # PT10S, PT2S -> seconds
        result = {"succeeded": True, "throughput": 9.4e9 - n, "retransmits": n,
                  "rtt": 12000, "tcp_window_size": 6291456, "mss": 8948, "mtu": 9000,
                  "intervals": {"json": [{"streams": [{"throughput-bits": 9.4e9}]}]}}
    elif test_type == "trace":
        spec.update({"sendwait": 0.5, "wait": 2.0, "probe-type": "udp"})
        result = {"succeeded": True, "mtu": 1500,
                  "hop": {"count": 3, "success_count": 3, "error_count": 0,
                          "ip": ["198.18.1.1", "198.18.2.1", "198.18.0.2"],
                          "ip_str": "198.18.1.1,198.18.2.1,198.18.0.2",
                          "checksum": "c%d" % (n % 2)},
                  "json": [[{"ip": "198.18.1.1", "mtu": 9000}]]}
    elif test_type in ("latency", "latencybg"):
        spec.update({"packet-count": 600, "packet-interval": 0.1})
        result = {"succeeded": True, "max_clock_error": 1.5,
                  "packets": {"sent": 600, "lost": n % 3, "received": 600 - n % 3,
                              "duplicated": 0, "reordered": 0, "loss": (n % 3) / 600.0},
                  "latency": {"min": 4.9, "max": 5.2, "mean": 5.0, "median": 5.0, "p_25": 4.95,
                              "p_75": 5.05, "p_95": 5.1, "mode": 5.0, "stddev": 0.05,
                              "variance": 0.0025, "histogram": {"4.90": 100, "5.00": 500}}}
    else:  # rtt
        spec.update({"count": 10, "interval": 1.0})
        result = {"succeeded": True,
                  "rtt": {"min": 0.0101, "max": 0.0121, "mean": 0.011, "stddev": 0.0004},
                  "packets": {"sent": 10, "lost": 0, "loss": 0.0, "received": 10,
                              "duplicated": 0, "reordered": 0, "json": [{"seq": 1}]}}
    test = {"type": test_type, "spec": spec}
    return {
        "@timestamp": "2026-05-20T%02d:%02d:30.000Z" % (8 + n // 60, n % 60),
        "@version": "1",
        "host": "127.0.0.1",
        "id": run,
        "test": test,
        "schedule": {"repeat": 21600.0, "slip": 10800.0, "sliprand": True},
        "result": result,
        "reference": {"display-task-name": "%s mesh" % test_type,
                      "display-task-group": ["perfSONAR"]},
        "pscheduler": {"added": start, "start_time": start, "end_time": start,
                       "duration": 20.0, "tool": tool, "participants": [source, dest],
                       "task_href": task_href, "run_href": task_href + "/runs/" + run,
                       "task_id": task, "run_id": run,
                       # canonical form checked on its own in test_checksum_is_the_pipelines
                       "test_checksum": hashlib.sha256(canonical_json(
                           {"observer_ip": None, "test": test, "tool": tool}).encode()
                       ).hexdigest()},
        "meta": {"ip_version": 4, "observer": _side(source, 46.2),
                 "source": _side(source, 46.2), "destination": _side(dest, 47.4)},
    }


def logstash_pmtu_document(envelope):
    """What the pipeline stores for a pmtu result the http archiver posts (`envelope`'s
    `result`): no 06 filter for pmtu, so the result is verbatim. Only the fields both
    routes can know (not @timestamp = ingest time, host = proxy, meta = DNS + GeoIP).
    The checksum here is the plain sorted JSON, which equals the pipeline's canonical
    form for a test without floats or non-BMP keys (pmtu specs have neither)."""
    inner = copy.deepcopy(envelope["result"])
    run, task = inner["run"], inner["task"]
    test = inner["test"]
    tool = inner["tool"]["name"]
    doc = {"@version": "1", "id": inner["id"], "test": test, "result": inner["result"],
           "reference": inner["reference"],
           "schedule": {k: {"PT6H": 21600.0, "PT3H": 10800.0}.get(v, v)
                        for k, v in task["schedule"].items()}}
    ps = {"added": run["added"], "start_time": run["start-time"], "end_time": run["end-time"],
          "participants": inner["participants"], "tool": tool, "task_href": task["href"],
          "run_href": run["href"], "task_id": task["href"].rsplit("/", 1)[1],
          "run_id": run["href"].rsplit("/", 1)[1],
          "test_checksum": hashlib.sha256(json.dumps(
              {"observer_ip": None, "test": test, "tool": tool}, sort_keys=True,
              separators=(",", ":"), ensure_ascii=False).encode()).hexdigest()}
    if "detail" in task and "duration" in task["detail"]:
        ps["duration"] = {"PT25S": 25.0}[task["detail"]["duration"]]
    doc["pscheduler"] = ps
    return doc


def dashboard_queries(stream_type):
    """Queries of perfSONAR's dashboards over one test type (index pattern pscheduler*):
    each returns documents or buckets keyed on the fields those dashboards group on."""
    base = {"bool": {"filter": [
        {"query_string": {"query": "test.type.keyword:%s" % stream_type}},
        {"range": {"pscheduler.start_time": {"gte": "2026-05-19T00:00:00Z",
                                             "lte": "2026-05-22T00:00:00Z"}}}]}}
    pair = {"terms": {"field": "meta.source.hostname.keyword", "size": 100}, "aggs": {
        "dst": {"terms": {"field": "meta.destination.hostname.keyword", "size": 100}, "aggs": {
            "ipv": {"terms": {"field": "meta.ip_version", "size": 10}, "aggs": {
                "tool": {"terms": {"field": "pscheduler.tool.keyword", "size": 10}, "aggs": {
                    "task": {"terms": {"field": "pscheduler.test_checksum.keyword",
                                       "size": 100}}}}}}}}}}
    matrix = {"terms": {"field": "test.spec.source.keyword", "size": 100}, "aggs": {
        "dst": {"terms": {"field": "test.spec.dest.keyword", "size": 100}}}}
    metric = {"throughput": "result.throughput", "trace": "result.hop.count",
              "latency": "result.packets.loss", "latencybg": "result.packets.loss",
              "rtt": "result.rtt.min"}[stream_type]
    queries = [
        {"size": 0, "query": base, "aggs": {"pair": pair}},
        {"size": 0, "query": base, "aggs": {"m": matrix, "stat": {"max": {"field": metric}}}},
        {"size": 0, "query": {"bool": {"filter": base["bool"]["filter"] + [
            {"query_string": {"query": 'meta.source.hostname.keyword:"ps-a.example.org" AND '
                                       'reference.display-task-name.keyword:"%s mesh"'
                                       % stream_type}}]}},
         "aggs": {"t": {"date_histogram": {"field": "pscheduler.start_time",
                                           "fixed_interval": "1h"},
                        "aggs": {"v": {"avg": {"field": metric}}}}}},
        {"size": 100, "query": base, "sort": [{"pscheduler.start_time": "asc"},
                                              {"pscheduler.run_id.keyword": "asc"}]},
    ]
    return queries
