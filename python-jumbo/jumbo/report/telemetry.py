"""`used` and `configured` measured: flow telemetry and interface MTUs read from Prometheus.

used        the share of bytes sent on jumbo-sized TCP segments, from SciTags' flowd-go
            (its Prometheus backend: one series per flow, labels act, exp, src, dst, flow,
            flavour; `flow_tcp_bytes_sent_total` the flow's bytes so far, `flow_tcp_mss` its
            sender MSS). A segment is jumbo-sized when its MSS is above 1460 (IPv4) / 1440
            (IPv6), what a 1500-byte MTU allows. Per flow, the bytes sent in the window are its
            last count minus its count at the window's start (a flow that starts inside the
            window counts from zero); they are jumbo bytes in the share of the window's samples
            its MSS was above the limit (exact for the usual flow, whose MSS does not change).
            Flows are summed per site pair and IP version; a pair with no telemetry falls back
            to the volume matrix (its bytes weighted by the capable share), and every pair says
            which source it came from.
configured  every host's interface MTU from the node exporter (`node_network_mtu_bytes`,
            labels instance, device): the largest MTU of its real interfaces; hosts the exporter
            does not know keep the measuring hosts' local MTU.

Values are bounded at the input (prometheus.py: a flow's or a pair's bytes at most 10^18, an
interface MTU at most MAX_MTU): a series beyond is no measurement; it is skipped and counted
(`implausible_series`), so no sum becomes inf or NaN; the sums are checked all the same.

Addresses and instances map to sites through the --sites file (host names, addresses or CIDR
prefixes) and else through the store's measuring hosts (their names and addresses).
"""

import collections
import datetime
import ipaddress
import math
import re
import time

from ..core.units import unix_time
from .errors import ReportError

BYTES = "flow_tcp_bytes_sent_total"
MSS = "flow_tcp_mss"
NODE_MTU = "node_network_mtu_bytes"
STANDARD_MSS = {4: 1460, 6: 1440}
V6 = 'src=~".*:.*"'
V4 = 'src!~".*:.*"'
# Interfaces that are not the host's network: loopback, containers, bridges, tunnels.
VIRTUAL_DEVICES = "lo|docker.*|veth.*|br-.*|virbr.*|cni.*|flannel.*|cali.*|kube.*|tun.*|tap.*|wg.*|dummy.*"
UNMAPPED = "(unmapped)"
SUBQUERY_POINTS = 500
MAX_MTU = 1 << 20           # no link's MTU comes near (Linux's loopback: 65536)


def _dur(seconds):
    return "%ds" % max(1, int(round(seconds)))


def flow_bytes(sel, window):
    """Per flow (flavour folded), the bytes sent in the `window` seconds up to the query time."""
    end = "max_over_time(%s{%s}[%s])" % (BYTES, sel, _dur(window))
    start = "last_over_time(%s{%s}[5m] offset %s)" % (BYTES, sel, _dur(window))
    return "max without(flavour) (clamp_min(%s - %s, 0) or %s)" % (end, start, end)


def jumbo_fraction(sel, window, limit):
    """Per flow, the share of the window's samples whose MSS was above `limit` (0..1)."""
    res = _dur(max(1.0, window / SUBQUERY_POINTS))
    return ("max without(flavour) (avg_over_time((%s{%s} > bool %d)[%s:%s]) or "
            "(min_over_time(%s{%s}[%s]) > bool %d))"
            % (MSS, sel, limit, _dur(window), res, MSS, sel, _dur(window), limit))


def pair_queries(version, window):
    sel = V6 if version == 6 else V4
    total = flow_bytes(sel, window)
    jumbo = "%s * %s" % (total, jumbo_fraction(sel, window, STANDARD_MSS[version]))
    return ("sum by (src, dst) (%s)" % total, "sum by (src, dst) (%s)" % jumbo)


def mesh_used_query(window):
    """The whole mesh's used share over `window` seconds, one PromQL expression (the adoption
    dashboard's; unmapped flows included, as Grafana knows no sites)."""
    parts = []
    for version, sel in ((4, V4), (6, V6)):
        parts.append("(%s * %s)" % (flow_bytes(sel, window), jumbo_fraction(sel, window, STANDARD_MSS[version])))
    return "sum(%s or %s) / sum(%s)" % (parts[0], parts[1], flow_bytes("", window))


def configured_query(target, devices=None):
    """The share of exporter instances whose largest real interface MTU is >= target."""
    sel = 'device=~"%s"' % devices if devices else 'device!~"%s"' % VIRTUAL_DEVICES
    return "avg(max by (instance) (%s{%s}) >= bool %d)" % (NODE_MTU, sel, int(target))


def _epoch(text):
    """Unix time of an ISO time or a bare YYYY-MM-DD (UTC midnight)."""
    if len(text) == 10:
        day = datetime.datetime.strptime(text, "%Y-%m-%d")
        return (day - datetime.datetime(1970, 1, 1)).total_seconds()
    return unix_time(text)


def window_epochs(report, now=None):
    """(start, end) in Unix time of the report's window; its end no later than now, and at
    least an hour long (a window of one instant holds no traffic)."""
    w = report["window"]
    now = now or time.time()
    end = min(_epoch(w["until"]), now) if w.get("until") else now
    start = _epoch(w["since"] or w["first"])
    if end - start < 1:
        start = end - 3600
    return start, end


class SiteMap(object):
    """Address or host name -> site: the --sites file (names, addresses, CIDR prefixes) first,
    then the store's measuring hosts."""

    def __init__(self, sites, paths):
        self.exact = {}
        self.nets = []
        for key, site in (sites or {}).items():
            if "/" in key:
                try:
                    self.nets.append((ipaddress.ip_network(key, strict=False), site))
                except ValueError:
                    raise ReportError("site file: %r is not a network prefix" % key)
            else:
                self.exact[_norm(key)] = site
        self.nets.sort(key=lambda n: -n[0].prefixlen)
        self.store = {}
        for p in paths:
            for host, ip, site in ((p.source, p.source_ip, p.source_site),
                                   (p.dest, p.dest_ip, p.dest_site)):
                for key in (host, ip):
                    if key:
                        self.store.setdefault(_norm(key), site)

    def site(self, key):
        key = _norm(key)
        if key in self.exact:
            return self.exact[key]
        try:
            addr = ipaddress.ip_address(key)
        except ValueError:
            addr = None
        if addr is not None:
            for net, site in self.nets:
                if addr.version == net.version and addr in net:
                    return site
        return self.store.get(key)


def _norm(key):
    key = key.strip().lower()
    try:
        return str(ipaddress.ip_address(key))
    except ValueError:
        return key


# A Prometheus instance label: "[v6 address]..." or "host:port" (one colon); anything else (a
# bare IPv6 address, a name without a port) is the host itself.
_INSTANCE = re.compile(r"\[(?P<bracketed>[^\]]*)|(?P<host>[^:]*):[^:]*\Z")


def instance_host(instance):
    """'host:9100', '198.18.0.1:9100', '[fd00::1]:9100' -> the host part."""
    match = _INSTANCE.match(instance)
    if match is None:
        return instance
    bracketed = match.group("bracketed")
    return match.group("host") if bracketed is None else bracketed


class Telemetry(object):
    """The report's hook (model.Options.extra): reads Prometheus once the paths are known and
    replaces `used` and `configured` in the report with the measured ones."""

    def __init__(self, prom, devices=None, now=None):
        self.prom = prom
        self.devices = devices
        self.now = now

    def __call__(self, report, paths, host_mtu, opts):
        start, end = window_epochs(report, self.now)
        sites = SiteMap(opts.sites, paths)
        t = collections.OrderedDict([("prometheus", self.prom.url),
                                     ("from", _iso(start)), ("to", _iso(end))])
        t.update(self._used(report, paths, sites, start, end, opts))
        t["configured"] = self._configured(report, host_mtu, sites, start, end)
        report["telemetry"] = t
        self._trend(report, sites)
        t["implausible_series"] = len(self.prom.implausible)

    # -- used ------------------------------------------------------------------------------------

    def _flows(self, sites, start, end):
        """{(src_site, dst_site, version): [bytes, jumbo]}, unmapped bytes, flows' host pairs."""
        cells = collections.defaultdict(lambda: [0.0, 0.0])
        unmapped = 0.0
        pairs = 0
        for version in (4, 6):
            total_q, jumbo_q = pair_queries(version, end - start)
            jumbo = {(lab.get("src"), lab.get("dst")): v for lab, v in self.prom.query(jumbo_q, end)}
            for lab, v in self.prom.query(total_q, end):
                src, dst = lab.get("src"), lab.get("dst")
                if src is None or dst is None:
                    raise ReportError("%s: a flow series without src/dst labels (is this flowd-go?)"
                                      % self.prom)
                if v <= 0:
                    continue                # a receiver's side: ACKs only
                j = min(jumbo.get((src, dst), 0.0), v)
                a, b = sites.site(src), sites.site(dst)
                pairs += 1
                if a is None or b is None:
                    unmapped += v
                    continue
                cell = cells[(a, b, version)]
                cell[0] += v
                cell[1] += j
        return cells, unmapped, pairs

    def _used(self, report, paths, sites, start, end, opts):
        flows, unmapped, host_pairs = self._flows(sites, start, end)
        cap = _capable_share(paths)
        usage = _Usage()
        for (a, b, v), (nbytes, jbytes) in sorted(flows.items()):
            usage.add_flow(a, b, v, nbytes, jbytes, cap(a, b, v))
        measured_pairs = set((a, b) for a, b, _v in flows)
        for a, b, volume in opts.volumes or ():
            c = cap(a, b)
            if (a, b) not in measured_pairs and c is not None:
                usage.add_volume(a, b, volume, c)
        all_bytes = sum(x[0] for x in usage.totals.values())
        all_jumbo = sum(x[1] for x in usage.totals.values())
        _finite(self.prom, all_bytes, all_jumbo, usage.gap, unmapped,
                *[v for x in usage.per_site.values() for v in x])
        used = _share(all_jumbo, all_bytes)
        if all_bytes:
            _set_used(report, used, usage.totals)
        return usage.section(report, used if all_bytes else None, all_bytes, all_jumbo,
                             unmapped, host_pairs, opts.limit)

    # -- configured ------------------------------------------------------------------------------

    def _configured(self, report, host_mtu, sites, start, end):
        sel = 'device=~"%s"' % self.devices if self.devices else 'device!~"%s"' % VIRTUAL_DEVICES
        expr = "max by (instance) (last_over_time(%s{%s}[%s]))" % (NODE_MTU, sel, _dur(end - start))
        target = report["target_mtu"]
        hosts = {}
        unmapped = []
        for lab, mtu in self.prom.query(expr, end, bound=MAX_MTU):
            inst = lab.get("instance")
            if inst is None:
                raise ReportError("%s: %s without an instance label" % (self.prom, NODE_MTU))
            host = instance_host(inst)
            site = sites.site(host)
            if site is None:
                unmapped.append(host)
                continue
            hosts[_norm(host)] = (site, int(mtu), "node exporter")
        measured = set()
        for host, (_start, mtu, site) in host_mtu.items():
            measured.add(_norm(host))
            if _norm(host) not in hosts:
                hosts[_norm(host)] = (site, mtu, "local-mtu")
        n = len(hosts)
        ok = sum(1 for site, mtu, _src in hosts.values() if mtu is not None and mtu >= target)
        from_exporter = sum(1 for v in hosts.values() if v[2] == "node exporter")
        if from_exporter:
            report["hosts"] = n
            report["configured_hosts"] = ok
            report["configured"] = _share(ok, n)
            report["configured_source"] = "node exporter" if from_exporter == n else \
                "node exporter + local-mtu"
        return collections.OrderedDict([
            ("configured", _share(ok, n)), ("hosts", n), ("configured_hosts", ok),
            ("from_exporter", from_exporter), ("not_measuring", len(set(hosts) - measured)),
            ("unmapped_instances", sorted(unmapped)[:50]),
            ("host_list", [collections.OrderedDict([("host", h), ("site", s), ("mtu", m), ("source", src)])
                           for h, (s, m, src) in sorted(hosts.items())][:max(report.get("limit") or 200, 1) * 5]),
        ])

    # -- trend -----------------------------------------------------------------------------------

    def _trend(self, report, sites):
        """The used share per trend bucket (query_range, one point per bucket end), over the
        flows between known sites, as the headline."""
        buckets = report["trend"]["buckets"]
        if not buckets:
            return
        step = 7 * 86400 if report["trend"]["interval"] == "week" else 86400
        try:
            first = _epoch(str(buckets[0]["bucket"])[:10])
        except ValueError:
            return
        sums = collections.defaultdict(lambda: [0.0, 0.0])
        for version in (4, 6):
            for index, q in enumerate(pair_queries(version, step)):
                for lab, points in self.prom.query_range(q, first + step, first + step * len(buckets),
                                                         step):
                    if sites.site(lab.get("src", "")) is None or sites.site(lab.get("dst", "")) is None:
                        continue
                    for at, v in points:
                        sums[int(round(at))][index] += v
        _finite(self.prom, *[v for x in sums.values() for v in x])
        for i, b in enumerate(buckets):
            total, jumbo = sums.get(int(round(first + step * (i + 1))), (0.0, 0.0))
            b["traffic_bytes"] = total
            b["used_share"] = _share(min(jumbo, total), total)


def _cell(a, b, version, source, nbytes, jbytes, capable, gap):
    return collections.OrderedDict([
        ("source_site", a), ("dest_site", b), ("ip_version", version), ("source", source),
        ("bytes", nbytes), ("jumbo_bytes", jbytes), ("used", _share(jbytes, nbytes)),
        ("capable", capable), ("gap_bytes", gap)])


def _finite(prom, *values):
    """The sums of bounded values stay finite; were one not, no report is better than NaN."""
    if not all(math.isfinite(v) for v in values):
        raise ReportError("%s: the telemetry sums are not finite numbers" % prom)


def _share(num, den):
    return (num / float(den)) if den else None


def _iso(epoch):
    return datetime.datetime.utcfromtimestamp(epoch).strftime("%Y-%m-%dT%H:%M:%SZ")


_DEVICE_RE = re.compile(r"^[A-Za-z0-9_.|*+?()\[\]^$-]{1,200}$")


def check_devices(regex):
    if regex is None:
        return None
    if not _DEVICE_RE.match(regex):
        raise ReportError("--prometheus-devices %r: expected a short interface-name regex" % regex)
    try:
        re.compile(regex)
    except re.error as err:
        raise ReportError("--prometheus-devices %r: %s" % (regex, err))
    return regex


def _capable_share(paths):
    """cap(a, b, v): the share of site a's paths to site b (in family v, or in both when v is
    not given) that are capable; None when no path was measured."""
    capable = collections.defaultdict(lambda: [0, 0])
    for p in paths:
        c = capable[(p.source_site, p.dest_site, p.ip_version)]
        c[0] += 1
        c[1] += p.capable
    pair_capable = collections.defaultdict(lambda: [0, 0])
    for (a, b, _v), (n, k) in capable.items():
        pair_capable[(a, b)][0] += n
        pair_capable[(a, b)][1] += k

    def cap(a, b, v=None):
        n, k = capable.get((a, b, v), (0, 0)) if v else pair_capable.get((a, b), (0, 0))
        return (k / float(n)) if n else None
    return cap


class _Usage(object):
    """Bytes and jumbo bytes summed by source, family and site, the gap (bytes that capable
    paths could have carried at jumbo size), and the cells shown."""

    def __init__(self):
        self.cells = []
        self.totals = {"telemetry": [0.0, 0.0], "volume matrix": [0.0, 0.0]}
        self.by_version = {4: [0.0, 0.0, 0.0], 6: [0.0, 0.0, 0.0]}
        self.per_site = collections.defaultdict(lambda: [0.0, 0.0])
        self.gap = 0.0

    def add_flow(self, a, b, v, nbytes, jbytes, c):
        g = min(nbytes - jbytes, nbytes * c) if c is not None else 0.0
        self.gap += g
        self.by_version[v][0] += nbytes
        self.by_version[v][1] += jbytes
        self.by_version[v][2] += g
        self.totals["telemetry"][0] += nbytes
        self.totals["telemetry"][1] += jbytes
        for s in {a, b}:
            self.per_site[s][0] += nbytes
            self.per_site[s][1] += jbytes
        self.cells.append(_cell(a, b, v, "telemetry", nbytes, jbytes, c, g))

    def add_volume(self, a, b, volume, c):
        self.totals["volume matrix"][0] += volume
        self.totals["volume matrix"][1] += volume * c
        self.cells.append(_cell(a, b, None, "volume matrix", volume, volume * c, c, 0.0))

    def section(self, report, used, all_bytes, all_jumbo, unmapped, host_pairs, limit):
        return [
            ("used", used),
            ("bytes", all_bytes), ("jumbo_bytes", all_jumbo),
            ("sources", collections.OrderedDict(
                (k, {"bytes": x[0], "jumbo_bytes": x[1], "used": _share(x[1], x[0])})
                for k, x in self.totals.items())),
            ("by_ip_version", collections.OrderedDict(
                ("ipv%d" % v, {"bytes": x[0], "jumbo_bytes": x[1], "used": _share(x[1], x[0]),
                               "gap_bytes": x[2], "gap": _share(x[2], x[0])})
                for v, x in sorted(self.by_version.items()))),
            ("capable", report["capable"]),
            ("gap_bytes", self.gap), ("gap", _share(self.gap, self.totals["telemetry"][0])),
            ("unmapped_bytes", unmapped), ("host_pairs", host_pairs),
            ("sites", collections.OrderedDict(
                (s, {"bytes": x[0], "jumbo_bytes": x[1], "used": _share(x[1], x[0])})
                for s, x in sorted(self.per_site.items()))),
            ("cells", self.cells[:max(limit, 1) * 10]),
        ]


def _set_used(report, used, totals):
    """The report's headline `used`, where it came from, and the targets' traffic verdicts."""
    report["used"] = used
    report["used_source"] = "telemetry" if not totals["volume matrix"][0] else \
        ("telemetry + volume matrix" if totals["telemetry"][0] else "volume matrix")
    for s in report["status"]:
        s["traffic"] = used
        s["traffic_met"] = used >= s["goal"]
