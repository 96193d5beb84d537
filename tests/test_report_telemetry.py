"""`used` and `configured` measured: the report against a real Prometheus (Debian's package)
scraping a small exporter that serves flowd-go-shaped flow metrics and node-exporter-shaped
interface MTUs with a known truth, on both stores (SQLite and a real OpenSearch).

The truth: between every two sites of the synthetic mesh (fixtures.synth.Mesh.small), flows at
IPv4 (the perfSONAR hosts' own addresses, mapped to sites through the store) and IPv6
(fd00:S::/64 prefixes, mapped through the --sites file); on a host pair whose path is capable,
80 % of the bytes go at a jumbo MSS and 20 % at 1448 / 1428, elsewhere all at the standard MSS.
Every flow is also exported in flowd-go's second flavour (must not count twice), a receiver-side
series carries a few bytes, and flows between unknown addresses stay unmapped.
"""

import datetime
import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

import prometheus_fixture as pf
from fixtures import synth
from jumbo.report.cli import main as cli_main
from jumbo.report.prometheus import Prometheus
from jumbo.report.errors import ReportError
import store_fixtures

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENV = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, os.path.join(ROOT, "python-jumbo")]))
# The store's week ends on the day the exporter's flows are scraped, even when the run crosses
# midnight after the store was written (CI, 2026-11-29): its last day is that of two hours ahead.
# TEL_AHEAD_HOURS=26 stands in for a module loaded late in the evening.
AHEAD = datetime.timedelta(hours=float(os.environ.get("TEL_AHEAD_HOURS", "2")))
START = (datetime.datetime.utcnow() + AHEAD - datetime.timedelta(days=6)).strftime("%Y-%m-%d")
MESH = synth.Mesh.small(days=7, start=START)
TARGET = 9000
needs_prometheus = pytest.mark.skipif(not pf.available(), reason="prometheus is not installed "
                                      "(Debian package `prometheus`, scripts/setup.sh)")


def v6(site, last=10):
    return "fd00:%d::%d" % (MESH.sites.index(site) + 1, last)


NO_TELEMETRY = ("SITE-E", "SITE-D")      # a pair no flow telemetry covers


def truth_flows():
    """[(src, dst, version, bytes, mss, src_site, dst_site)] and the expected sums."""
    flows = []
    for i, a in enumerate(MESH.sites):
        for j, b in enumerate(MESH.sites):
            if a == b or (a, b) == NO_TELEMETRY:
                continue
            volume = float((i + 1) * 1e9 + (j + 1) * 1e8)
            h, o = MESH.host(a, 0), MESH.host(b, 1)
            jumbo = MESH.capable(h, o)
            for version, src, dst, big, small in ((4, h.ip, o.ip, 8948, 1448),
                                                  (6, v6(a), v6(b), 8928, 1428)):
                share = 0.8 if jumbo else 0.0
                if version == 6 and (a, b) == ("SITE-A", "SITE-F"):
                    big = 1450      # a 1510-byte path: above IPv6's 1440, so jumbo-sized
                if share:
                    flows.append((src, dst, version, volume * share, big, a, b))
                flows.append((src, dst, version, volume * (1 - share), small, a, b))
    return flows


FLOWS = truth_flows()


def jumbo_sized(flow):
    return flow[4] > (1460 if flow[2] == 4 else 1440)


def sites_file(tmp_path):
    path = tmp_path / "sites.txt"
    lines = ["fd00:%d::/64 %s" % (i + 1, s) for i, s in enumerate(MESH.sites)]
    lines.append("ps9.site-a.example SITE-A")     # a perfSONAR host that does not measure
    path.write_text("\n".join(lines) + "\n")
    return str(path)


# The exporter's interface MTUs: every measuring host but one (ps1.site-f keeps its local MTU);
# ps1.site-b was reconfigured to 9000 (the store still says 1500); one non-measuring host.
def exporter_mtus():
    out = {}
    for h in MESH.hosts:
        if h.name == "ps1.site-f.example":
            continue
        out[h.name] = 9000 if h.name == "ps1.site-b.example" else h.mtu
    out["ps9.site-a.example"] = 1500
    return out


def expected_configured():
    mtus = dict(exporter_mtus())
    mtus["ps1.site-f.example"] = MESH.host("SITE-F", 1).mtu
    return sum(1 for m in mtus.values() if m >= TARGET), len(mtus)


@pytest.fixture(scope="module")
def prom():
    if not pf.available():
        pytest.skip("prometheus is not installed")
    exporter = pf.Exporter()
    port = 40000
    total = 0.0
    for src, dst, _v, nbytes, mss, _a, _b in FLOWS:
        port += 1
        for flavour in ("netlink", "ebpf"):
            pf.serve_flow(exporter, pf.flow_labels(src, dst, port, flavour=flavour), nbytes, mss)
        total += nbytes
        # The receiver's side of the same flow: ACKs only.
        pf.serve_flow(exporter, pf.flow_labels(dst, src, port), 0, mss)
    pf.serve_flow(exporter, pf.flow_labels("192.0.2.1", "192.0.2.2", 1), 5e9, 1448)  # unmapped
    for host, mtu in exporter_mtus().items():
        instance = "%s:9100" % host
        pf.serve_mtu(exporter, instance, "eth0", mtu)
        pf.serve_mtu(exporter, instance, "lo", 65536)
        pf.serve_mtu(exporter, instance, "docker0", 1500)
    pf.serve_mtu(exporter, "storage1.example:9100", "eth0", 9000)                  # unmapped
    server = pf.PrometheusServer([exporter.target])
    server.first_scrape_day = datetime.datetime.utcnow().strftime("%Y-%m-%d")
    try:
        server.wait_for('sum(flow_tcp_bytes_sent_total{flavour="netlink"})', total + 5e9)
        server.wait_for("count(node_network_mtu_bytes)", 3 * len(exporter_mtus()) + 1)
        yield server
    finally:
        server.stop()
        exporter.close()


sqlite_url, os_url, store_url = store_fixtures.both_stores(MESH.records, "tel")


def report(store_url, prom, tmp_path, *extra, fmt="json"):
    out = tmp_path / ("r." + fmt)
    assert cli_main(["--store", store_url, "--prometheus", prom.url, "--sites", sites_file(tmp_path),
                     "--format", fmt, "--out", str(out)] + list(extra)) == 0
    return json.loads(out.read_text()) if fmt == "json" else out.read_text()


def capable_share(a, b):
    pairs = [(h, o) for h in MESH.hosts if h.site == a for o in MESH.hosts if o.site == b]
    return sum(1 for h, o in pairs if MESH.capable(h, o)) / float(len(pairs))


@needs_prometheus
def test_used_and_configured_match_the_truth(store_url, prom, tmp_path):
    r = report(store_url, prom, tmp_path)
    t = r["telemetry"]
    total = sum(f[3] for f in FLOWS)
    jumbo = sum(f[3] for f in FLOWS if jumbo_sized(f))
    assert t["bytes"] == pytest.approx(total) and t["jumbo_bytes"] == pytest.approx(jumbo)
    assert r["used"] == pytest.approx(jumbo / total) and r["used_source"] == "telemetry"
    assert t["unmapped_bytes"] == pytest.approx(5e9)
    for version in (4, 6):
        vb = sum(f[3] for f in FLOWS if f[2] == version)
        vj = sum(f[3] for f in FLOWS if f[2] == version and jumbo_sized(f))
        assert t["by_ip_version"]["ipv%d" % version]["used"] == pytest.approx(vj / vb)
    cells = {(c["source_site"], c["dest_site"], c["ip_version"]): c for c in t["cells"]}
    assert len(cells) == 2 * 29
    gap = 0.0
    for (a, b, version), c in cells.items():
        mine = [f for f in FLOWS if (f[5], f[6], f[2]) == (a, b, version)]
        nbytes = sum(f[3] for f in mine)
        jbytes = sum(f[3] for f in mine if jumbo_sized(f))
        assert c["source"] == "telemetry"
        assert c["bytes"] == pytest.approx(nbytes) and c["used"] == pytest.approx(jbytes / nbytes), c
        if version == 4:
            assert c["capable"] == pytest.approx(capable_share(a, b)), (a, b)
            want = min(nbytes - jbytes, nbytes * capable_share(a, b))
            assert c["gap_bytes"] == pytest.approx(want), (a, b)
            gap += want
        else:
            assert c["capable"] is None          # the store measured IPv4 only
    assert t["gap_bytes"] == pytest.approx(gap)
    assert [s["traffic_met"] for s in r["status"]] == [jumbo / total >= 0.5, jumbo / total >= 0.99]
    ok, n = expected_configured()
    assert (r["configured_hosts"], r["hosts"]) == (ok, n) == (11, 13)
    assert r["configured"] == pytest.approx(ok / float(n))
    conf = t["configured"]
    assert conf["from_exporter"] == 12 and conf["not_measuring"] == 1
    assert conf["unmapped_instances"] == ["storage1.example"]
    hosts = {h["host"]: h for h in conf["host_list"]}
    assert hosts["ps1.site-b.example"]["mtu"] == 9000 and hosts["ps1.site-b.example"]["source"] == "node exporter"
    assert hosts["ps1.site-f.example"]["source"] == "local-mtu"
    assert hosts["ps9.site-a.example"]["mtu"] == 1500            # lo (65536) never counts
    # The trend's bucket of today, when Prometheus scraped the flows, carries their used share;
    # a bucket whose day holds none of the scrapes has none (never a share of nothing).
    today = datetime.datetime.utcnow().strftime("%Y-%m-%d")
    shares = {str(b["bucket"])[:10]: b["used_share"] for b in r["trend"]["buckets"]}
    for day in {prom.first_scrape_day, today}:
        assert shares.pop(day) == pytest.approx(jumbo / total), day
    assert set(shares.values()) == {None}, shares


@needs_prometheus
def test_every_format_shows_used_capable_configured_and_their_sources(sqlite_url, prom, tmp_path):
    total = sum(f[3] for f in FLOWS)
    used = "%.1f%%" % (100.0 * sum(f[3] for f in FLOWS if jumbo_sized(f)) / total)
    text = report(sqlite_url, prom, tmp_path, fmt="text")
    assert "used       %7s  of bytes sent (telemetry" % used in text, text[:1500]
    assert "configured" in text and "node exporter" in text
    csv_text = report(sqlite_url, prom, tmp_path, fmt="csv")
    assert "telemetry,mesh,used,%r" % (sum(f[3] for f in FLOWS if jumbo_sized(f)) / total) in csv_text
    assert "telemetry,SITE-A->SITE-F/ipv6,used," in csv_text
    html = report(sqlite_url, prom, tmp_path, fmt="html")
    assert 'id="telemetry"' in html and used in html and 'data-series="used"' in html


@needs_prometheus
def test_volume_matrix_fills_pairs_without_telemetry(sqlite_url, prom, tmp_path):
    """A pair no flow telemetry covers takes the volume matrix (capable-weighted), marked so."""
    volumes = tmp_path / "v.csv"
    volumes.write_text("SITE-A,SITE-F,1e15\nSITE-E,SITE-D,1e12\n")
    r = report(sqlite_url, prom, tmp_path, "--volumes", str(volumes))
    t = r["telemetry"]
    filled = [c for c in t["cells"] if c["source"] == "volume matrix"]
    assert [(c["source_site"], c["dest_site"]) for c in filled] == [NO_TELEMETRY]
    assert filled[0]["bytes"] == 1e12
    assert filled[0]["used"] == pytest.approx(capable_share(*NO_TELEMETRY))
    assert r["used_source"] == "telemetry + volume matrix"
    total = sum(f[3] for f in FLOWS) + 1e12
    jumbo = sum(f[3] for f in FLOWS if jumbo_sized(f)) + 1e12 * capable_share(*NO_TELEMETRY)
    assert r["used"] == pytest.approx(jumbo / total)
    assert t["sources"]["volume matrix"]["bytes"] == 1e12


def test_unreachable_prometheus_is_a_clear_exit(sqlite_url, tmp_path):
    port = pf.free_port()
    proc = subprocess.run([sys.executable, "-m", "jumbo.report.cli", "--store", sqlite_url,
                           "--prometheus", "http://127.0.0.1:%d" % port], env=ENV,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                          timeout=60)
    assert proc.returncode == 3 and "Traceback" not in proc.stderr
    assert "is unreachable" in proc.stderr and "127.0.0.1:%d" % port in proc.stderr


def test_credentials_never_on_the_command_line(tmp_path):
    with pytest.raises(ReportError, match="no credentials in the URL"):
        Prometheus("http://user:pw@127.0.0.1:9090")
    token = tmp_path / "token"
    token.write_text("abc\n")
    with pytest.raises(ReportError, match="only sent over https"):
        Prometheus("http://prom.example:9090", token_file=str(token))
    p = Prometheus("http://127.0.0.1:9090", token_file=str(token))
    assert p.headers["Authorization"] == "Bearer abc"
    auth = tmp_path / "auth"
    auth.write_text("reader:s3cret\n")
    p = Prometheus("https://prom.example", auth_file=str(auth))
    assert p.headers["Authorization"].startswith("Basic ")


HOSTILE = {
    "notjson": b"<html>oops</html>",
    "error": json.dumps({"status": "error", "error": "bad"}).encode(),
    "matrix": json.dumps({"status": "success", "data": {"resultType": "matrix", "result": []}}).encode(),
    "labels": json.dumps({"status": "success", "data": {"resultType": "vector", "result": [
        {"metric": {"src": 5}, "value": [1, "1"]}]}}).encode(),
    "negative": json.dumps({"status": "success", "data": {"resultType": "vector", "result": [
        {"metric": {"src": "a", "dst": "b"}, "value": [1, "-5"]}]}}).encode(),
    "time": json.dumps({"status": "success", "data": {"resultType": "vector", "result": [
        {"metric": {"src": "a", "dst": "b"}, "value": [1e999, "1"]}]}}).encode(),
    "number": json.dumps({"status": "success", "data": {"resultType": "vector", "result": [
        {"metric": {"src": "a", "dst": "b"}, "value": [1, 5]}]}}).encode(),
}


@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_hostile_answers_are_clear_errors(kind):
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            body = HOSTILE[kind]
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        prom = Prometheus("http://127.0.0.1:%d" % server.server_address[1], timeout=5)
        with pytest.raises(ReportError) as err:
            prom.query("up", 0)
        assert "127.0.0.1" in str(err.value)
    finally:
        server.shutdown()
        server.server_close()
