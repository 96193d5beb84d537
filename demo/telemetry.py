"""The demo's traffic and interfaces as the sites' monitoring would show them: the illustrative
volume matrix (mesh.volume_tb) as flowd-go-shaped flow telemetry and every perfSONAR host's
interface MTU as node-exporter metrics, scraped by a real Prometheus (lab/prometheus.py).

Flows follow what the lab's paths allow: on a path whose truth is jumbo-capable (the report's
rule, checks.headline_truth) 80 % of the bytes go at a jumbo MSS (9000 - 40 / - 60) and the rest
at 1460 / 1440; elsewhere everything at 1460 / 1440. 70 % of each pair's bytes are IPv4, 30 %
IPv6. Besides the six measuring hosts the exporter knows one that does not measure (cern-ps2,
a latency node left at 1500): `configured` from the exporter counts it, local-mtu could not.
"""

import os

from . import checks, mesh

JUMBO_SHARE = 0.8
V4_SHARE = 0.7
FLOWS_PER_PAIR = 4
EXTRA_HOSTS = (("cern-ps2", "cern", 1500),)
MSS = {4: (mesh.TARGET_MTU - 40, 1460), 6: (mesh.TARGET_MTU - 60, 1440)}


def missing():
    """None, or why the telemetry part cannot run (which part is missing)."""
    from lab import prometheus
    if not prometheus.available():
        return ("Prometheus is missing (%s; the Debian package `prometheus`, installed by "
                "scripts/setup.sh)" % prometheus.PROMETHEUS)
    return None


def truth(topology, measured):
    """{pair: (bytes, jumbo bytes)}, used, configured hosts / hosts: what the report must say."""
    head = checks.headline_truth(topology, measured)
    capable = set(head["capable_pairs"])
    pairs = {}
    for s, d, _rev in measured:
        volume = mesh.volume_tb(s, d) * 1e12
        pairs[(s, d)] = (volume, volume * JUMBO_SHARE if (s, d) in capable else 0.0)
    total = sum(v for v, _j in pairs.values())
    jumbo = sum(j for _v, j in pairs.values())
    hosts = dict((s, topology.local_mtu(s)) for s in mesh.SITES)
    hosts.update((name, mtu) for name, _site, mtu in EXTRA_HOSTS)
    ok = sum(1 for m in hosts.values() if m >= mesh.TARGET_MTU)
    return {"pairs": pairs, "used": jumbo / total if total else None, "bytes": total,
            "configured": ok / float(len(hosts)), "configured-hosts": ok, "hosts": len(hosts)}


class Serving(object):
    """Exporter + Prometheus for one demo run; stop() ends only what it started."""

    def __init__(self, topology, measured, out):
        from lab import prometheus as pf
        self.pf = pf
        self.exporter = pf.Exporter()
        self.server = None
        self.truth = truth(topology, measured)
        total = 0.0
        port = 50000
        for (s, d), (volume, jumbo) in sorted(self.truth["pairs"].items()):
            for version, share in ((4, V4_SHARE), (6, 1 - V4_SHARE)):
                src, dst = topology.address(s, version), topology.address(d, version)
                big, small = MSS[version]
                part_j, part_s = jumbo * share, (volume - jumbo) * share
                for i in range(FLOWS_PER_PAIR):
                    port += 1
                    mss = big if i < FLOWS_PER_PAIR // 2 else small
                    amount = (part_j if mss == big else part_s) / (FLOWS_PER_PAIR // 2)
                    if amount:
                        pf.serve_flow(self.exporter, pf.flow_labels(src, dst, port), amount, mss)
                        total += amount
        for site in mesh.SITES:
            pf.serve_mtu(self.exporter, "%s:9100" % site, "eth0", topology.local_mtu(site))
            pf.serve_mtu(self.exporter, "%s:9100" % site, "lo", 65536)
        for name, _site, mtu in EXTRA_HOSTS:
            pf.serve_mtu(self.exporter, "%s:9100" % name, "eth0", mtu)
        self.total = total
        self.sites_file = os.path.join(out, "sites.txt")
        with open(self.sites_file, "w") as handle:
            handle.write("# host or address -> site (the flows' addresses, the exporters' hosts)\n")
            for site in mesh.SITES:
                handle.write("%s %s\n" % (site, site))
                for version in (4, 6):
                    handle.write("%s %s\n" % (topology.address(site, version), site))
            for name, site, _mtu in EXTRA_HOSTS:
                handle.write("%s %s\n" % (name, site))

    def start(self):
        self.server = self.pf.PrometheusServer([self.exporter.target])
        self.server.wait_for('sum(flow_tcp_bytes_sent_total)', self.total)
        self.server.wait_for("count(node_network_mtu_bytes)", 2 * len(mesh.SITES) + len(EXTRA_HOSTS))
        return self.server.url

    def stop(self):
        if self.server is not None:
            self.server.stop()
            self.server = None
        self.exporter.close()


def check(report, csv_text, text, html, t, share_check):
    """The measured used / configured in every format against the truth: (ok, lines)."""
    lines = []
    tel = report.get("telemetry") or {}
    ok = share_check("used (bytes on jumbo segments, telemetry)", report.get("used"), t["used"],
                     "%.0f of %.0f TB/week" % (sum(j for _v, j in t["pairs"].values()) / 1e12,
                                               t["bytes"] / 1e12))
    ok = share_check("configured (node exporter)", report.get("configured"), t["configured"],
                     "%d/%d hosts, measuring or not" % (t["configured-hosts"], t["hosts"])) and ok
    cells = {}
    for c in tel.get("cells") or []:
        key = (c["source_site"], c["dest_site"])
        b, j = cells.get(key, (0.0, 0.0))
        cells[key] = (b + c["bytes"], j + c["jumbo_bytes"])
    wrong = [pair for pair, (b, j) in t["pairs"].items()
             if pair not in cells or abs(cells[pair][0] - b) > 1e-6 * b or abs(cells[pair][1] - j) > 1e-6 * b]
    lines.append("   report used per site pair: %d/%d pairs as served %s"
                 % (len(t["pairs"]) - len(wrong), len(t["pairs"]), "ok" if not wrong else "MISMATCH %s" % wrong[:3]))
    ok = ok and not wrong
    used = report.get("used")
    shown = "%.1f%%" % (100.0 * used) if used is not None else "n/a"
    formats = {"text": shown in text and "telemetry" in text,
               "csv": "telemetry,mesh,used,%r" % used in csv_text,
               "html": 'id="telemetry"' in html and shown in html}
    bad = [k for k, v in formats.items() if not v]
    lines.append("   used, capable and configured in text, JSON, CSV and HTML: %s"
                 % ("ok" if not bad else "MISSING in %s" % ", ".join(bad)))
    return ok and not bad, lines
