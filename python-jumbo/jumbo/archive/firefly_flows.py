"""The collector's memory: per flow the newest MSS, PMTU and byte counter; per site pair and
IP version the bytes sent at jumbo-sized MSS, at standard MSS and with the MSS unknown.

flowd-go sends a flow's `start` and `end` with no TCP view at all; every enrichment period
(its `ongoing` messages) it sends the kernel's tcp_info of the socket: `bytesSent` (a counter
since the socket opened) and `sndMss` (the MSS the socket sends with now). So:

- the bytes between two ongoing messages of a flow are the counter's difference, and they are
  counted at the MSS of the newer message (the MSS the socket sent them with, for a flow whose
  MSS does not change mid-way, the usual case);
- a flow first seen mid-way (the collector started after it) counts its counter whole;
- a counter that went down is a new socket on the same 5-tuple: it counts whole;
- an `end` carrying `usage.sent` (the SciTags schema's, written by applications, not by
  flowd-go) adds what the counter had not yet seen, at the flow's newest MSS, or with the MSS
  unknown when no ongoing message ever came: a flow shorter than the enrichment period;
- a segment is jumbo-sized when its MSS is above what a 1500-byte MTU allows (1460 on IPv4,
  1440 on IPv6), as the Prometheus source counts it (jumbo.report.telemetry).

Memory is bounded: at most `max_flows` flows (a new flow beyond is refused and counted, never
one evicted: an evicted flow seen again would count its counter twice), each forgotten after
`expiry` seconds without a message; at most `max_cells` site pairs between two flushes.
"""

from ..core.mtu import STANDARD_MTU, mss_for

JUMBO, STANDARD, UNKNOWN = 0, 1, 2
CLASSES = ("jumbo_bytes", "standard_bytes", "unknown_mss_bytes")
UNMAPPED = ""               # the site of an address no --sites entry covers


def mss_class(mss, ip_version):
    if not mss:
        return UNKNOWN
    return JUMBO if mss > mss_for(STANDARD_MTU, ip_version) else STANDARD


class _Flow(object):
    __slots__ = ("cell", "mss", "pmtu", "counter", "seen")

    def __init__(self, cell, now):
        self.cell = cell
        self.mss = None
        self.pmtu = None
        self.counter = 0
        self.seen = now


class FlowTable(object):
    """Fireflies in, per-cell byte sums out (`take()`); `site_of(address)` maps an address to
    its site (None: not mapped)."""

    def __init__(self, site_of, max_flows=100000, max_cells=100000, expiry=600.0):
        self.site_of = site_of
        self.max_flows = max_flows
        self.max_cells = max_cells
        self.expiry = expiry
        self.flows = {}
        self.cells = {}
        self.counts = dict.fromkeys(("fireflies", "flows_refused", "cells_refused", "not_tcp",
                                     "flows_expired", "flows_ended"), 0)

    def _cell(self, ff):
        src = self.site_of(ff.src)
        dst = self.site_of(ff.dst)
        return (src if src is not None else UNMAPPED, dst if dst is not None else UNMAPPED,
                ff.ip_version)

    def _sums(self, cell):
        sums = self.cells.get(cell)
        if sums is None:
            if len(self.cells) >= self.max_cells:
                self.counts["cells_refused"] += 1
                return None
            sums = self.cells[cell] = [0, 0, 0, 0]
        return sums

    def _add(self, cell, kind, nbytes):
        sums = self._sums(cell) if nbytes > 0 else None
        if sums is not None:
            sums[kind] += nbytes

    def observe(self, ff, now):
        """Take one parsed firefly (jumbo.archive.firefly.Firefly) at monotonic time `now`."""
        self.counts["fireflies"] += 1
        if ff.protocol != "tcp":
            self.counts["not_tcp"] += 1
            return
        key = (ff.ip_version, ff.src, ff.src_port, ff.dst, ff.dst_port)
        flow = self.flows.get(key)
        if flow is None:
            if len(self.flows) >= self.max_flows:
                self.counts["flows_refused"] += 1
                return
            flow = self.flows[key] = _Flow(self._cell(ff), now)
            sums = self._sums(flow.cell)
            if sums is not None:
                sums[3] += 1
        flow.seen = now
        if ff.snd_mss:
            flow.mss = ff.snd_mss
        if ff.pmtu:
            flow.pmtu = ff.pmtu
        if ff.bytes_sent is not None:
            delta = ff.bytes_sent - flow.counter if ff.bytes_sent >= flow.counter else ff.bytes_sent
            flow.counter = ff.bytes_sent
            self._add(flow.cell, mss_class(ff.snd_mss or flow.mss, ff.ip_version), delta)
        if ff.state == "end":
            if ff.usage_sent is not None and ff.usage_sent > flow.counter:
                self._add(flow.cell, mss_class(flow.mss, ff.ip_version), ff.usage_sent - flow.counter)
            del self.flows[key]
            self.counts["flows_ended"] += 1

    def expire(self, now):
        """Forget the flows silent for longer than `expiry` seconds (their bytes are counted)."""
        old = [key for key, flow in self.flows.items() if now - flow.seen > self.expiry]
        for key in old:
            del self.flows[key]
        self.counts["flows_expired"] += len(old)
        return len(old)

    def take(self):
        """The cells summed since the last take: {(src_site, dst_site, ip_version):
        [jumbo_bytes, standard_bytes, unknown_mss_bytes, flows]}; the sums restart at zero."""
        cells, self.cells = self.cells, {}
        return cells

    def restore(self, cells):
        """Put back what a flush could not store, so the next flush stores it."""
        for cell, sums in cells.items():
            mine = self.cells.setdefault(cell, [0, 0, 0, 0])
            for i, value in enumerate(sums):
                mine[i] += value
