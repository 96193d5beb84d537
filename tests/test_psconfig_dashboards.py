"""The dashboards' queries against documents the jumbo archive store wrote into a real OpenSearch.

Each Grafana target (Lucene query + bucket aggregations + metric, time field
pscheduler.start_time) is turned into the OpenSearch request the Grafana OpenSearch datasource
sends, run against a prefixed copy of the pscheduler_pmtu data stream, and the buckets that come
back are compared with what was written: which cell of the matrix holds which path MTU, in which
colour, and where the black holes are.
"""

import copy
import json
import os
import re
import uuid

import pytest

from fixtures import samples
from jumbo.archive.stores import open_store
from opensearch_fixture import drop_prefix

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DASHBOARD = os.path.join(ROOT, "dashboards", "grafana-pmtu.json")
AGENT_DISPLAYS = os.path.join(ROOT, "dashboards", "psconfig-grafana-agent-pmtu.json")
PAIR = os.path.join(ROOT, "dashboards", "grafana-pmtu-pair.json")
PAIR_AGENT = os.path.join(ROOT, "dashboards", "grafana-pmtu-pair-agent.json.j2")

A, B, C = "ps-a.example.org", "ps-b.example.org", "ps-c.example.org"
SITES = {A: "SITE-A", B: "SITE-B", C: "SITE-C"}
T_FROM, T_TO = "2026-05-19T10:00:00Z", "2026-05-21T10:00:00Z"  # samples start 2026-05-20T10:00Z


def _load(path):
    with open(path) as f:
        return json.load(f)


def _env(src, dst, minutes, path_mtu, task="Path MTU IPv4", **kwargs):
    env = samples.pmtu_envelope(0, source=src, dest=dst, minutes=minutes, path_mtu=path_mtu,
                                **kwargs)
    env["result"]["reference"] = {"display-task-name": task,
                                  "display-task-group": ["Jumbo frames"],
                                  "source-site": SITES[src], "dest-site": SITES[dst]}
    return env


def _pair(src, dst, minutes, gain):
    """A jumbo-throughput run (the gain panel's source), in the template's task."""
    return samples.pair_envelope(src, dst, minutes=minutes, gain=gain, reference={
        "display-task-name": "Jumbo throughput gain IPv4", "display-task-group": ["Jumbo frames"],
        "source-site": SITES[src], "dest-site": SITES[dst]})


HOLE = {"ttl": 2, "ip": "198.18.2.1", "size": 9000}
DOCS = [
    _env(A, B, 10, 9000),
    _pair(A, B, 15, 2.25),
    _env(A, B, 20, None, succeeded=False, pmtud="unknown"),   # failed run: no MTU
    _env(A, B, -3000, 1500),                                  # outside the time range
    _env(A, C, 30, 1500),
    _env(A, C, 40, 1400, task="Path MTU IPv6"),
    _env(B, A, 50, 4000),
    _env(B, A, 55, 9000, pmtud="unknown"),                    # undecided: flows unmeasured
    _env(B, C, 60, 1500, pmtud="blackhole", blackhole=HOLE),  # located black hole
    _env(C, A, 70, 9000),
    _env(C, A, 80, 1501),
    _env(C, B, 90, 1500, pmtud="blackhole", blackhole=None),  # black hole, hop not located
]

# Worst path MTU per source x destination for the IPv4 task, and its colour.
EXPECTED_V4 = {(A, B): 9000, (A, C): 1500, (B, A): 4000, (B, C): 1500, (C, A): 1501, (C, B): 1500}
COLOURS = {9000: "green", 4000: "orange", 1501: "orange", 1500: "red", 1400: "red"}


# ---------------------------------------------------------------------------------------------
# What Grafana's OpenSearch datasource does with a target


def _lucene_escape(value):
    return re.sub(r'([+\-=&|><!(){}\[\]^"~*?:\\/ ])', r"\\\1", value)


def _substitute(query, variables):
    def repl(match):
        name, fmt = match.group(1), match.group(2)
        value = variables[name]
        if value == "$__all":
            return "*"  # the variable's allValue
        return _lucene_escape(value) if fmt == "lucene" else value
    return re.sub(r"\$\{(\w+)(?::(\w+))?\}", repl, query)


def _terms(agg):
    settings = agg.get("settings", {})
    size = int(settings.get("size", "10"))
    body = {"field": agg["field"], "size": size or 500,
            "min_doc_count": int(settings.get("min_doc_count", "1"))}
    if settings.get("orderBy") == "_term":
        body["order"] = {"_key": settings.get("order", "desc")}
    return {"terms": body}


def _bucket_agg(agg):
    if agg["type"] == "terms":
        return _terms(agg)
    if agg["type"] == "date_histogram":
        return {"date_histogram": {"field": agg["field"],
                                   "fixed_interval": agg["settings"]["interval"],
                                   "min_doc_count": int(agg["settings"].get("min_doc_count", 0))}}
    raise AssertionError("bucket aggregation %s not handled by this test" % agg["type"])


def to_request(target, variables):
    query = _substitute(target["query"], variables)
    metrics = {}
    for metric in target["metrics"]:
        if metric["type"] != "count":
            metrics[metric["id"]] = {metric["type"]: {"field": metric["field"]}}
    aggs = metrics
    for agg in reversed(target["bucketAggs"]):
        body = _bucket_agg(agg)
        if aggs:
            body["aggs"] = aggs
        aggs = {agg["id"]: body}
    return {
        "size": 0,
        "query": {"bool": {"filter": [
            {"range": {target["timeField"]: {"gte": T_FROM, "lte": T_TO}}},
            {"query_string": {"query": query, "analyze_wildcard": True}}]}},
        "aggs": aggs,
    }


def rows(response, target):
    """[(bucket keys..., metric value)] flattened as Grafana builds its data frame."""
    metric = target["metrics"][0]
    out = []

    def walk(aggs, depth, keys):
        agg = target["bucketAggs"][depth]
        for bucket in aggs[agg["id"]]["buckets"]:
            key = bucket.get("key_as_string", bucket["key"])
            if depth + 1 < len(target["bucketAggs"]):
                walk(bucket, depth + 1, keys + [key])
            else:
                value = (bucket["doc_count"] if metric["type"] == "count"
                         else bucket[metric["id"]]["value"])
                out.append(tuple(keys + [key, value]))
    walk(response["aggregations"], 0, [])
    return out


def colour(steps, value):
    chosen = None
    for step in steps:
        if step["value"] is None or value >= step["value"]:
            chosen = step["color"]
    return chosen


# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def archive(opensearch_url):
    prefix = "dash%s_" % uuid.uuid4().hex[:8]
    store = open_store("%s/?prefix=%s" % (opensearch_url, prefix))
    assert store.put_many(copy.deepcopy(DOCS)) == [None] * len(DOCS)
    store.refresh()

    def search(request):
        return store.search("pscheduler*", request)

    yield search
    drop_prefix(store, prefix)


def _panel(title):
    for panel in _load(DASHBOARD)["panels"]:
        if panel["title"] == title:
            return panel
    raise AssertionError("no panel %r" % title)


def _matrix(search, panel, task="$__all"):
    target = panel["targets"][0]
    result = rows(search(to_request(target, {"task": task})), target)
    return {(r[0], r[1]): r[2] for r in result}


@pytest.mark.parametrize("path", [DASHBOARD, PAIR])
def test_dashboard_is_grafana_json_over_the_suites_streams(path):
    dash = _load(path)
    assert dash["uid"] and dash["panels"]
    for panel in dash["panels"]:
        assert panel["datasource"]["type"] == "grafana-opensearch-datasource"
        for target in panel["targets"]:
            assert target["timeField"] == "pscheduler.start_time"
            assert re.match(r"test\.type\.keyword:(pmtu|jumbo-throughput) ", target["query"])
    ds = dash["templating"]["list"][0]
    assert ds["type"] == "datasource" and ds["query"] == "grafana-opensearch-datasource"


def test_path_mtu_matrix_cells_and_colours(archive):
    panel = _panel("Path MTU (worst in range)")
    steps = panel["fieldConfig"]["defaults"]["thresholds"]["steps"]
    cells = _matrix(archive, panel, task="Path MTU IPv4")
    assert cells == EXPECTED_V4
    assert {k: colour(steps, v) for k, v in cells.items()} == \
        {k: COLOURS[v] for k, v in EXPECTED_V4.items()}
    assert colour(steps, 1500) == "red" and colour(steps, 8999) == "orange"
    # All tasks: the IPv6 run on A -> C (1400) is the worst there now
    cells = _matrix(archive, panel)
    expected = dict(EXPECTED_V4)
    expected[(A, C)] = 1400
    assert cells == expected


def test_black_hole_matrix(archive):
    panel = _panel("PMTUD black holes (runs)")
    steps = panel["fieldConfig"]["defaults"]["thresholds"]["steps"]
    cells = _matrix(archive, panel)
    assert cells == {(B, C): 1, (C, B): 1}
    assert all(colour(steps, v) == "#000000" for v in cells.values())


def test_undecided_matrix(archive):
    """Runs that carried 9000 on the flows they measured but left others unmeasured: never
    jumbo, their own matrix (the failed run with pmtud unknown is not one)."""
    panel = _panel("Undecided runs (PMTUD unknown)")
    assert _matrix(archive, panel) == {(B, A): 1}
    assert panel["options"]["addUrl"] is True


def test_site_matrix(archive):
    cells = _matrix(archive, _panel("Path MTU by site (worst in range)"), task="Path MTU IPv4")
    assert cells == {(SITES[s], SITES[d]): v for (s, d), v in EXPECTED_V4.items()}


def test_time_series_pie_and_gain(archive):
    panel = _panel("Path MTU over time per path")
    target = panel["targets"][0]
    result = rows(archive(to_request(target, {"task": "Path MTU IPv4"})), target)
    worst = {}
    for src, dst, _time, value in result:
        if value is not None:
            worst[(src, dst)] = min(worst.get((src, dst), value), value)
    assert worst == EXPECTED_V4

    panel = _panel("Runs by PMTUD verdict")
    target = panel["targets"][0]
    counts = dict(rows(archive(to_request(target, {"task": "$__all"})), target))
    assert counts == {"ok": 6, "blackhole": 2, "unknown": 2}

    panel = _panel("Jumbo throughput gain (9000 vs 1500)")
    target = panel["targets"][0]
    gains = {(r[0], r[1]): r[2] for r in rows(archive(to_request(target, {"task": "$__all"})),
                                                target)}
    assert gains == {(A, B): pytest.approx(2.25)}
    # a ratio: 2.25 shows as "2.25 x", not as "225%"
    unit = panel["fieldConfig"]["defaults"]["unit"]
    assert "percent" not in unit and unit == "suffix:x"


def test_dashboards_read_only_fields_both_routes_store():
    """No panel reads a field that only the jumbo archiver writes: every field is in the pmtu
    or jumbo-throughput result the test itself produces (stored verbatim by Logstash too) or in the common
    perfSONAR layout (test, reference, pscheduler)."""
    pmtu_result = set(samples.pmtu_result()) | set(samples.pair_result()) | {"blackhole.size"}
    fields = set()
    for path in (DASHBOARD, PAIR):
        for panel in _load(path)["panels"]:
            for target in panel["targets"]:
                fields.update(a["field"] for a in target["bucketAggs"])
                fields.update(m["field"] for m in target["metrics"] if "field" in m)
                fields.update(re.findall(r"(?<![{\w.-])([\w.-]+):", target["query"]))
                fields.update(re.findall(r"_exists_:([\w.-]+)", target["query"]))
                fields.discard("_exists_")
    for display in _load(AGENT_DISPLAYS)["displays"].values():
        fields.update(display[k] for k in ("stat_field", "row_field", "col_field"))
    for field in fields:
        head, _, rest = field.partition(".")
        assert not field.startswith(("jumbo.", "meta.")), field
        if head == "result":
            assert rest in pmtu_result, field
        else:
            assert head in ("test", "reference", "pscheduler"), field
            # dynamic string fields of the common layout are read through .keyword, as
            # perfSONAR's own dashboards do (the bare text field cannot be aggregated)
            assert field in ("pscheduler.start_time", "test.spec.ip-version") or \
                field.endswith(".keyword"), field


def test_matrix_cells_open_the_pair_page(archive):
    pair = _load(PAIR)
    names = [v["name"] for v in pair["templating"]["list"]]
    assert {"source", "dest"} <= set(names)
    for title in ("Path MTU (worst in range)", "PMTUD black holes (runs)"):
        options = _panel(title)["options"]
        assert options["addUrl"] is True
        assert options["url"].startswith("/d/%s/" % pair["uid"])
        assert (options["urlVar1"], options["urlVar2"]) == ("source", "dest")
    for display in _load(AGENT_DISPLAYS)["displays"].values():
        assert display["matrix_url_template"].endswith("/" + os.path.basename(PAIR_AGENT))
        assert (display["matrix_url_var1"], display["matrix_url_var2"]) == ("source", "dest")
    # the agent's copy is the same page with the agent's uid and datasource filled in, rendered
    # with Jinja2 as the agent does (tests/test_psconfig_grafana_agent.py runs the agent itself)
    jinja2 = pytest.importorskip("jinja2")
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(os.path.dirname(PAIR_AGENT)))
    agent = json.loads(env.get_template(os.path.basename(PAIR_AGENT)).render(
        grafana_uuid="u-1", grafana_datasource_name="local", dashboard_tag="psconfig"))
    assert agent["uid"] == "u-1" and agent["panels"] == pair["panels"]

    # the page's MTU panels, for the black-hole pair B -> C
    def ask(title):
        panel = [p for p in pair["panels"] if p["title"] == title][0]
        target = panel["targets"][0]
        return rows(archive(to_request(target, {"source": B, "dest": C})), target)

    mtus = [r[-1] for r in ask("Path MTU over time") if r[-1] is not None]
    assert mtus == [1500] and [r[0] for r in ask("Path MTU over time")][0] == 4
    assert dict(ask("Runs by PMTUD verdict")) == {"blackhole": 1}
    assert [r[-1] for r in ask("Black hole: size that vanished") if r[-1]] == [9000]
    assert [r[-1] for r in ask("Interface MTU at the source") if r[-1]] == [9000]


def _agent_target(display, task_name):
    """The target the pSConfig Grafana agent's dashboard template builds from a display."""
    def terms(field, id_):
        return {"field": field, "id": id_, "type": "terms",
                "settings": {"min_doc_count": "1", "order": "desc", "orderBy": "_term",
                             "size": "0"}}
    return {
        "query": 'reference.display-task-name.keyword: "%s"' % task_name,
        "timeField": "pscheduler.start_time",
        "bucketAggs": [terms(display["row_field"], "2"), terms(display["col_field"], "3")],
        "metrics": [{"id": "1", "field": display["stat_field"], "type": display["stat_type"]}],
    }


def test_agent_displays(archive):
    displays = _load(AGENT_DISPLAYS)["displays"]
    mtu = displays["pmtu_path_mtu"]
    assert mtu["task_selector"]["test_types"] == ["pmtu"]
    target = _agent_target(mtu, "Path MTU IPv4")
    cells = {(r[0], r[1]): r[2] for r in rows(archive(to_request(target, {})), target)}
    # the agent's query does not drop failed runs; they carry no MTU, so min ignores them
    assert cells == EXPECTED_V4
    assert {k: colour(mtu["thresholds"], v) for k, v in cells.items()} == \
        {k: COLOURS[v] for k, v in EXPECTED_V4.items()}

    hole = displays["pmtu_blackhole"]
    target = _agent_target(hole, "Path MTU IPv4")
    cells = {(r[0], r[1]): r[2] for r in rows(archive(to_request(target, {})), target)}
    marked = {k: v for k, v in cells.items() if v is not None}
    # located black holes only: C -> B vanished without a locatable hop (see the Grafana panel)
    assert marked == {(B, C): 9000}
    assert colour(hole["thresholds"], 9000) == "#000000"


# -- the adoption dashboard: used / capable / configured beside the DC26 / DC28 targets ------------

ADOPTION = os.path.join(ROOT, "dashboards", "grafana-jumbo-adoption.json")
# Grafana's own (React) panels; Angular ones (graph, singlestat, table-old, ...) are gone in 12.
REACT_PANELS = {"timeseries", "stat", "table", "bargauge", "piechart", "text", "state-timeline",
                "status-history", "barchart", "heatmap"}


def _adoption_target(ref):
    for target in _load(ADOPTION)["panels"][0]["targets"]:
        if target["refId"] == ref:
            return target
    raise AssertionError("no target %s" % ref)


def test_adoption_dashboard_follows_perfsonar_grafana_conventions():
    from jumbo.report import telemetry
    dash = _load(ADOPTION)
    assert dash["uid"] == "jumbo-adoption" and dash["schemaVersion"] >= 39
    variables = {v["name"]: v for v in dash["templating"]["list"]}
    assert variables["datasource"]["query"] == "grafana-opensearch-datasource"
    assert variables["prometheus"]["type"] == "datasource" and variables["prometheus"]["query"] == "prometheus"
    for panel in dash["panels"]:
        assert panel["type"] in REACT_PANELS, panel["type"]
        for target in panel["targets"]:
            uid = target["datasource"]["uid"]
            assert uid in ("${datasource}", "${prometheus}", "__expr__"), target
            if uid == "${datasource}":
                assert target["timeField"] == "pscheduler.start_time"
                assert target["query"].startswith("test.type.keyword:pmtu ")
                fields = set(re.findall(r"(?<![{\w.-])([\w.-]+):", target["query"]))
                assert fields <= {"test.type.keyword", "result.succeeded", "result.path-mtu",
                                  "result.pmtud"}, fields
    trend = dash["panels"][0]
    steps = [s["value"] for s in trend["fieldConfig"]["defaults"]["thresholds"]["steps"]]
    assert steps == [None, 0.5, 0.99]                                  # DC26, DC28
    assert trend["fieldConfig"]["defaults"]["custom"]["thresholdsStyle"]["mode"] == "dashed"
    assert {t["refId"] for t in trend["targets"]} == {"A", "B", "capable", "used", "configured"}
    assert _adoption_target("capable")["expression"] == "$A / $B"
    # The dashboard's PromQL is the report's own (jumbo.report.telemetry), day by day.
    assert _adoption_target("used")["expr"] == telemetry.mesh_used_query(86400)
    assert _adoption_target("configured")["expr"] == telemetry.configured_query(9000)


def test_adoption_capable_share_of_results(archive):
    counts = []
    for ref in ("A", "B"):
        target = _adoption_target(ref)
        counts.append(sum(r[-1] for r in rows(archive(to_request(target, {})), target)))
    in_range = [d for d in DOCS if d["result"]["test"]["type"] == "pmtu" and d["result"]["result"]["succeeded"]
                and T_FROM <= d["result"]["schedule"]["start"] <= T_TO]
    capable = [d for d in in_range if (d["result"]["result"].get("path-mtu") or 0) >= 9000
               and d["result"]["result"].get("pmtud") not in ("blackhole", "unknown")]
    assert counts == [len(capable), len(in_range)] == [2, 9]


def test_adoption_used_and_configured_on_a_real_prometheus():
    import prometheus_fixture as pf
    import urllib.parse
    import urllib.request
    if not pf.available():
        pytest.skip("prometheus is not installed")
    exporter = pf.Exporter()
    flows = [("198.18.1.10", "198.18.2.10", 8e9, 8948), ("198.18.1.10", "198.18.2.10", 2e9, 1448),
             ("fd00:1::10", "fd00:2::10", 3e9, 1450), ("fd00:1::10", "fd00:2::10", 1e9, 1428)]
    for port, (src, dst, nbytes, mss) in enumerate(flows, 1):
        for flavour in ("netlink", "ebpf"):
            pf.serve_flow(exporter, pf.flow_labels(src, dst, port, flavour=flavour), nbytes, mss)
    for host, mtu in (("ps1", 9000), ("ps2", 9000), ("ps3", 9000), ("ps4", 1500)):
        pf.serve_mtu(exporter, host + ":9100", "eth0", mtu)
        pf.serve_mtu(exporter, host + ":9100", "lo", 65536)
    server = pf.PrometheusServer([exporter.target])
    try:
        server.wait_for('sum(flow_tcp_bytes_sent_total{flavour="netlink"})', 14e9)
        server.wait_for("count(node_network_mtu_bytes)", 8)

        def value(ref):
            url = "%s/api/v1/query?%s" % (server.url, urllib.parse.urlencode(
                {"query": _adoption_target(ref)["expr"]}))
            result = json.loads(urllib.request.urlopen(url, timeout=10).read())["data"]["result"]
            return float(result[0]["value"][1])

        assert value("used") == pytest.approx((8e9 + 3e9) / 14e9)    # 1450 is jumbo-sized on IPv6
        assert value("configured") == pytest.approx(3 / 4.0)
    finally:
        server.stop()
        exporter.close()
