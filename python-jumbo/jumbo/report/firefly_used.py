"""`used` from the fireflies the sites send (jumbo-fireflies' sums in the store): the report's
hook (model.Options.extra), beside the Prometheus one (telemetry.py).

Per site pair and IP version the store holds the bytes sent at a jumbo-sized MSS, at the
standard MSS, and with the MSS unknown (flows that ended before their first periodic firefly,
whose `end` said how many bytes they sent). The used share is jumbo / (jumbo + standard): the
bytes whose MSS is known; the unknown ones are stated beside it (bytes and share of all), with
the bounds the share would take were they all jumbo or all standard. Nothing is guessed.

The headline's `used` comes from the fireflies when no Prometheus flow telemetry gave it
(`used_source` "fireflies"); with both, the headline stays Prometheus' and the fireflies
section shows its own figures beside it, each pair saying its source. Then too the trend's
buckets get the fireflies' used share of their own period (`used_share`, `used_source`,
`traffic_bytes` with a known MSS, `unknown_mss_bytes`), and the section a used share per site
(`sites`: the bytes of the pairs the site is an end of), which jumbo-alarms compares.
"""

import calendar
import collections
import time

from ..archive.errors import StoreError
from ..archive.firefly_flows import UNMAPPED
from ..archive.firefly_store import iso, open_fireflies
from ..archive.urls import redact_url
from .errors import ReportError, StoreDown
from .telemetry import window_epochs

SOURCE = "fireflies"


def _share(num, den):
    return (num / float(den)) if den else None


def _figures(jumbo, standard, unknown, flows):
    known = jumbo + standard
    total = known + unknown
    return collections.OrderedDict([
        ("used", _share(jumbo, known)), ("bytes", total), ("jumbo_bytes", jumbo),
        ("standard_bytes", standard), ("unknown_mss_bytes", unknown),
        ("unknown_mss_share", _share(unknown, total)),
        ("used_low", _share(jumbo, total)), ("used_high", _share(jumbo + unknown, total)),
        ("flows", flows)])


class FireflyUsed(object):
    def __init__(self, store_url, store_options=None, now=None):
        self.url = store_url
        self.options = store_options or {}
        self.now = now

    def _sums(self, periods):
        """The store's sums of each (start, end) period, asked over one connection."""
        try:
            store = open_fireflies(self.url, **self.options)
            try:
                return [store.sums(start, end) for start, end in periods]
            finally:
                store.close()
        except StoreError as err:
            raise StoreDown("fireflies: %s" % err)

    @staticmethod
    def _buckets(report, end):
        """(bucket, start, end) epochs of each trend bucket, its end no later than `end`."""
        trend = report.get("trend") or {}
        step = 7 * 86400 if trend.get("interval") == "week" else 86400
        out = []
        for b in trend.get("buckets") or ():
            try:
                start = calendar.timegm(time.strptime(str(b["bucket"])[:10], "%Y-%m-%d"))
            except ValueError:
                continue
            if start < end:
                out.append((b, start, min(start + step, end)))
        return out

    @staticmethod
    def _mapped(sums):
        """Mesh totals [jumbo, standard, unknown, flows] of sums between known sites."""
        total = [0, 0, 0, 0]
        for (a, b, v), x in sums.items():
            if any(y < 0 for y in x):
                raise ReportError("fireflies: a stored sum of no known shape (%s -> %s, IP %r)"
                                  % (a, b, v))
            if UNMAPPED not in (a, b):
                total = [t + y for t, y in zip(total, x)]
        return total

    def __call__(self, report, paths, _host_mtu, opts):
        start, end = window_epochs(report, self.now)
        buckets = self._buckets(report, end)
        answers = self._sums([(start, end)] + [(s, e) for _b, s, e in buckets])
        capable = collections.defaultdict(lambda: [0, 0])
        for p in paths:
            c = capable[(p.source_site, p.dest_site, p.ip_version)]
            c[0] += 1
            c[1] += p.capable
        cells = []
        mesh = [0, 0, 0, 0]
        unmapped = [0, 0, 0, 0]
        by_version = {4: [0, 0, 0, 0], 6: [0, 0, 0, 0]}
        per_site = collections.defaultdict(lambda: [0, 0])
        for (a, b, v), sums in sorted(answers[0].items()):
            if v not in by_version or any(x < 0 for x in sums):
                raise ReportError("fireflies: a stored sum of no known shape (%s -> %s, IP %r)" % (a, b, v))
            if UNMAPPED in (a, b):
                unmapped = [x + y for x, y in zip(unmapped, sums)]
                continue
            mesh = [x + y for x, y in zip(mesh, sums)]
            for s in {a, b}:
                per_site[s][0] += sums[0] + sums[1]
                per_site[s][1] += sums[0]
            by_version[v] = [x + y for x, y in zip(by_version[v], sums)]
            n, k = capable.get((a, b, v), (0, 0))
            cell = collections.OrderedDict([("source_site", a), ("dest_site", b), ("ip_version", v),
                                            ("source", SOURCE)])
            cell.update(_figures(*sums))
            cell["capable"] = _share(k, n)
            cells.append(cell)
        cells.sort(key=lambda c: -c["bytes"])
        section = collections.OrderedDict([("store", redact_url(self.url)), ("from", iso(start)),
                                           ("to", iso(end))])
        section.update(_figures(*mesh))
        section["by_ip_version"] = collections.OrderedDict(
            ("ipv%d" % v, _figures(*x)) for v, x in sorted(by_version.items()))
        section["unmapped_bytes"] = sum(unmapped[:3])
        section["sites"] = collections.OrderedDict(
            (s, {"bytes": x[0], "jumbo_bytes": x[1], "used": _share(x[1], x[0])})
            for s, x in sorted(per_site.items()))
        section["cells"] = cells[:max(opts.limit, 1) * 10]
        report["fireflies"] = section
        if "telemetry" in (report.get("used_source") or ""):
            return
        for (b, _s, _e), sums in zip(buckets, answers[1:]):
            jumbo, standard, unknown, _flows = self._mapped(sums)
            b["used_share"] = _share(jumbo, jumbo + standard)
            b["used_source"] = SOURCE
            b["traffic_bytes"] = jumbo + standard
            b["unknown_mss_bytes"] = unknown
        if section["used"] is not None:
            report["used"] = section["used"]
            report["used_source"] = SOURCE
            for s in report["status"]:
                s["traffic"] = section["used"]
                s["traffic_met"] = section["used"] >= s["goal"]

