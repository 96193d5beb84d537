"""The paths a partial black hole holds (jumbo.archive.evidence), applied to the report.

A path sighted with a partial black hole in some run of the window, and not cleared since by
enough clean flows, is reported as that partial black hole whatever its latest run says: its
latest row is read as partial, with the hop and size of the sighting when the latest run did
not locate one, so the whole model (state, capable share, black-hole list, culprits, sites,
matrix) sees the hole. The lucky runs between sightings are no change of state: the path's
changes after its first sighting are left out of the change list, and it is never flapping.
"""

from ..archive.evidence import cleared, needed_flows, path_key
from ..archive.path_state import blackhole_fields


def hold(rows, found):
    """{(source, dest, ip_version): Evidence} of the paths held; `rows` (the latest paths'
    unjudged records, path_record.PathRecord.unjudged, by that key) are changed in place to
    carry the hole."""
    held = {}
    for key, p in rows.items():
        ev = found.get(path_key(*key))
        if ev is None or cleared(ev):
            continue
        held[key] = ev
        if blackhole_fields(pmtud=p.pmtud, partial=p.partial) and (
                p.blackhole_ttl is not None or p.blackhole_ip is not None):
            continue        # the latest run saw the hole and located it: its own words
        located = p.blackhole_ttl is not None or p.blackhole_ip is not None
        full = blackhole_fields(pmtud=p.pmtud) and not p.partial
        p.partial = not full
        if not located:
            p.blackhole_ttl, p.blackhole_ip = ev.ttl, ev.ip
        if p.blackhole_size is None:
            p.blackhole_size = ev.size
    return held


def fields(ev):
    """The evidence of a black-hole entry of the report (None for a hole seen only in the
    latest run of a path without per-run evidence, e.g. a full black hole)."""
    if ev is None:
        return [("seen", None), ("runs", None), ("failed_share", None), ("clean_flows", None),
                ("needed_flows", None), ("first_seen", None), ("last_seen", None)]
    return [("seen", ev.seen), ("runs", ev.runs), ("failed_share", round(ev.share, 4)),
            ("clean_flows", ev.clean_flows), ("needed_flows", needed_flows(ev.share)),
            ("first_seen", ev.first), ("last_seen", ev.last)]


def changes(ch, held):
    """The store's changes with the held paths' changes after their first sighting left out,
    and the held paths out of the flapping list (the counts are the store's, of every
    change)."""
    if not held:
        return ch
    ch = dict(ch)
    ch["changes"] = [c for c in ch["changes"]
                     if not _after_first(c, held, c["start"])]
    ch["flapping"] = [f for f in ch["flapping"]
                      if (f["source"], f["dest"], f["ip_version"]) not in held]
    return ch


def _after_first(change, held, start):
    ev = held.get((change["source"], change["dest"], change["ip_version"]))
    return ev is not None and start > ev.first

