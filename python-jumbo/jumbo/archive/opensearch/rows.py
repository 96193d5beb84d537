"""Rows of the OpenSearch reader: Latest rows from the latest index's packed values or from a
history document, dates as the report writes them, and shared (interned) strings."""

import sys
from operator import itemgetter

from ..query_base import Latest
from .layout import LATEST_ROW_FIELDS

ROW_LENGTH = len(LATEST_ROW_FIELDS)


def tiebreak(events):
    return sorted(events, key=lambda e: (_neg(e["start"]), e["source"], e["dest"]))


def _neg(text):
    return tuple(-ord(ch) for ch in text)


def iso_value(agg):
    text = agg.get("value_as_string")
    if text:
        return iso_text(text)
    return None


def iso_text(text):
    """OpenSearch dates come back as written or with millis: normalise to second precision."""
    if text and text.endswith(".000Z"):
        return text[:-5] + "Z"
    return text


def row_latest(values):
    """A Latest from a pmtu document's row values, with its localisation values after them
    when they were read (LOCATED)."""
    intern = sys.intern
    (source, dest, ipv, ssite, dsite, start, ok, mtu, local, pmtud, partial, reverse_mtu,
     reverse_pmtud) = PMTU_VALUES(values)
    # MTUs repeat on every path (1500, 9000, ...): one int object each (not one per value as
    # JSON parses them: ~60 MB of 718,800 paths' three MTUs).
    ints = _INTS
    if mtu.__class__ is int:
        mtu = ints.setdefault(mtu, mtu)
    if local.__class__ is int:
        local = ints.setdefault(local, local)
    if reverse_mtu.__class__ is int:
        reverse_mtu = ints.setdefault(reverse_mtu, reverse_mtu)
    if len(ints) > SHARED_KEPT:
        ints.clear()
    if len(values) > ROW_LENGTH:
        source_ip, dest_ip, bh_ttl, bh_ip, bh_size, hops = values[ROW_LENGTH:]
        source_ip, dest_ip, hops = shared(source_ip), shared(dest_ip), compact_hops(hops)
    else:
        source_ip = dest_ip = bh_ttl = bh_ip = bh_size = hops = None
    return Latest(
        intern(source) if source else source, intern(dest) if dest else dest, ipv, source_ip,
        dest_ip, intern(ssite) if ssite else ssite, intern(dsite) if dsite else dsite,
        shared(iso_text(start)) if start.__class__ is str else start, bool(ok), None, mtu, local,
        intern(pmtud) if pmtud else pmtud,
        bool(partial), bh_ttl, bh_ip, bh_size, reverse_mtu,
        intern(reverse_pmtud) if reverse_pmtud else reverse_pmtud, hops, None)


def row_values(*names):
    """A getter of `names` (in that order) from a list of LATEST_ROW_FIELDS values."""
    return itemgetter(*(LATEST_ROW_FIELDS.index(name) for name in names))


PMTU_VALUES = row_values("source", "dest", "ip_version", "source_site", "dest_site", "start",
                       "succeeded", "path_mtu", "local_mtu", "pmtud", "partial",
                       "reverse_path_mtu", "reverse_pmtud")
GAIN_FIELDS = ("source", "dest", "ip_version", "gain", "throughput_standard",
                "throughput_jumbo", "start")
GAIN_VALUES = row_values(*GAIN_FIELDS)
LATENCY_VALUES = row_values("source", "dest", "rtt", "loss")


def shared(text):
    """Host, site and enum strings repeat across 100,000 paths: keep one copy of each."""
    return sys.intern(text) if isinstance(text, str) else text


def compact_hops(hops):
    """A path's hops as (ttl, ip, mtu) triples. The same hop (a router at the same distance,
    with the same MTU) is on many paths of a mesh: one triple each, shared (as JSON-parsed
    lists and triples of their own, the 258,768 failing paths' hops of a 600-host mesh were
    ~140 MB of the report)."""
    if not hops or not isinstance(hops, list):
        return None
    known = _HOPS
    out = []
    for h in hops:
        if isinstance(h, dict):
            triple = (h.get("ttl"), h.get("ip"), h.get("mtu"))
            try:
                out.append(known.setdefault(triple, triple))
            except TypeError:       # an unhashable value: a damaged hop, kept as it is
                out.append(triple)
    if len(known) > SHARED_KEPT:
        known.clear()
    return tuple(out)


# The hops and MTU values seen so far, each once; each map is let go past SHARED_KEPT entries
# (a hostile store's values all distinct would otherwise grow it without bound).
_HOPS = {}
_INTS = {}
SHARED_KEPT = 200000


def latest_from_source(src, hops, results):
    return Latest(
        src.get("source"), src.get("dest"), src.get("ip_version"), src.get("source_ip"),
        src.get("dest_ip"), src.get("source_site"), src.get("dest_site"), iso_text(src.get("start")),
        bool(src.get("succeeded")), src.get("error"), src.get("path_mtu"), src.get("local_mtu"),
        src.get("pmtud"), bool(src.get("partial")), src.get("blackhole_ttl"), src.get("blackhole_ip"),
        src.get("blackhole_size"), src.get("reverse_path_mtu"), src.get("reverse_pmtud"), hops, results)
