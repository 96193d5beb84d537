"""`used` from the fireflies the sites send (jumbo-fireflies' sums in the store): the report's
hook (model.Options.extra), beside the Prometheus one (telemetry.py).

Per site pair and IP version the store holds the bytes sent at a jumbo-sized MSS, at the
standard MSS, and with the MSS unknown (flows that ended before their first periodic firefly,
whose `end` said how many bytes they sent). The used share is jumbo / (jumbo + standard): the
bytes whose MSS is known; the unknown ones are stated beside it (bytes and share of all), with
the bounds the share would take were they all jumbo or all standard. Nothing is guessed.

The headline's `used` comes from the fireflies when no Prometheus flow telemetry gave it
(`used_source` "fireflies"); with both, the headline stays Prometheus' and the fireflies
section shows its own figures beside it, each pair saying its source.
"""

import collections

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

    def _sums(self, start, end):
        try:
            store = open_fireflies(self.url, **self.options)
            try:
                return store.sums(start, end)
            finally:
                store.close()
        except StoreError as err:
            raise StoreDown("fireflies: %s" % err)

    def __call__(self, report, paths, _host_mtu, opts):
        start, end = window_epochs(report, self.now)
        capable = collections.defaultdict(lambda: [0, 0])
        for p in paths:
            c = capable[(p.source_site, p.dest_site, p.ip_version)]
            c[0] += 1
            c[1] += p.capable
        cells = []
        mesh = [0, 0, 0, 0]
        unmapped = [0, 0, 0, 0]
        by_version = {4: [0, 0, 0, 0], 6: [0, 0, 0, 0]}
        for (a, b, v), sums in sorted(self._sums(start, end).items()):
            if v not in by_version or any(x < 0 for x in sums):
                raise ReportError("fireflies: a stored sum of no known shape (%s -> %s, IP %r)" % (a, b, v))
            if UNMAPPED in (a, b):
                unmapped = [x + y for x, y in zip(unmapped, sums)]
                continue
            mesh = [x + y for x, y in zip(mesh, sums)]
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
        section["cells"] = cells[:max(opts.limit, 1) * 10]
        report["fireflies"] = section
        if section["used"] is not None and "telemetry" not in (report.get("used_source") or ""):
            report["used"] = section["used"]
            report["used_source"] = SOURCE
            for s in report["status"]:
                s["traffic"] = section["used"]
                s["traffic_met"] = section["used"] >= s["goal"]

