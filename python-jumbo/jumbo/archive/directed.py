"""One jumbo-throughput run, two directed observations.

A `direction: both` run measures source->dest and dest->source in the same slot: its result
keeps each direction's figures in `by-direction` and its legs carry their `direction`. The
report's gains are per directed path, so such a run is archived as two records:

  * the forward record (source->dest): record.normalize's, with that direction's gain and
    throughputs (not the two directions pooled) and the MSS of its own jumbo legs; its path
    MTU stays the probe's (the path-MTU step measured source->dest only). Its id is the run's.
  * the reverse record (dest->source): ends, addresses and sites swapped; the same run
    href, start, tool and family; the id is derived from the run's with the direction in it,
    so one run is two rows and replaying it stores nothing twice. Nothing probed that
    direction: its path MTU and PMTUD verdict come from its own jumbo legs (REVERSE_PATH below).
    It keeps no `raw` (the forward record has the result: one copy).

Each record has its own verdict: `succeeded` when its direction decided something (a gain, a
black hole, a path MTU below the jumbo leg's, jumbo legs the receiver's MSS held small, or
the run's skipped jumbo leg for the forward one), whatever the pooled verdict; otherwise
succeeded is False and `error` says why (the result's own error first). E.g. on the lab's
asymmetric path (dest->source through a 1500 link) the pooled run fails, yet the reverse
record is a success: not jumbo, path MTU 1500.

A result without both directions in `by-direction` (every forward-only run) is one record,
exactly record.normalize's.
"""

import hashlib

from ..core.mtu import is_jumbo, receiver_capped
from . import record as records
from .values import as_int, as_num, as_obj

DIRECTIONS = ("forward", "reverse")
SWAPPED = (("source", "dest"), ("source_ip", "dest_ip"), ("source_site", "dest_site"))


def normalize(value):
    """[(record, raw)]: one entry, or (forward, raw) then (reverse, None) for a both-ways run."""
    rec, raw = records.normalize(value)
    split = _by_direction(rec, raw)
    if split is None:
        return [(rec, raw)]
    res = raw["result"]
    forward = _directed(rec, res, split["forward"], "forward")
    reverse = dict(rec)
    for one, other in SWAPPED:
        reverse[one], reverse[other] = rec[other], rec[one]
    reverse["id"] = reverse_id(rec["id"])
    _reverse_path(reverse, res)
    return [(forward, raw), (_directed(reverse, res, split["reverse"], "reverse"), None)]


def reverse_id(forward_id):
    """The dest->source record's id: the run's id with the direction in it (stable)."""
    return hashlib.sha1(("reverse:" + forward_id).encode("utf-8")).hexdigest()


def _by_direction(rec, raw):
    """The result's `by-direction` when it holds both directions' objects, else None."""
    if rec["test_type"] != "jumbo-throughput" or not isinstance(raw, dict):
        return None
    res = raw.get("result")
    split = res.get("by-direction") if isinstance(res, dict) else None
    if not isinstance(split, dict) or not all(isinstance(split.get(d), dict) for d in DIRECTIONS):
        return None
    return split


def _legs(res, direction, size):
    runs = res.get("runs")
    return [r for r in (runs if isinstance(runs, list) else [])
            if isinstance(r, dict) and r.get("direction") == direction and r.get("size") == size]


def _all_capped(jumbo):
    """Every jumbo leg held below its size by the receiver's MSS (core.mtu.receiver_capped):
    the direction decided that TCP did not use jumbo frames."""
    return bool(jumbo) and all(r.get("stalled") is not True and receiver_capped(
        as_int(r.get("mss")), as_int(r.get("mtu")), as_int(r.get("observed-mss")),
        as_int(r.get("pmtu"))) for r in jumbo)


def _directed(rec, res, figures, direction):
    """`rec` with one direction's figures and its own verdict (succeeded, error)."""
    rec["throughput_standard"] = as_num(as_obj(figures.get("standard")).get("mean"))
    rec["throughput_jumbo"] = as_num(as_obj(figures.get("jumbo")).get("mean"))
    rec["gain"] = as_num(figures.get("gain"))
    jumbo = _legs(res, direction, "jumbo")
    # The legs' own check (observed MSS within the options' slack of the asked one) is what
    # `succeeded` says: only verified legs give the direction's MSS.
    seen = [as_int(r.get("observed-mss")) or as_int(r.get("mss")) for r in jumbo
            if r.get("succeeded") is True]
    seen = [m for m in seen if m]
    rec["mss"] = max(seen) if seen else None
    skipped = direction == "forward" and res.get("verdict") == "skipped"
    stalled = any(r.get("stalled") is True for r in jumbo)
    lowered = rec["path_mtu"] is not None and rec["path_mtu"] < max(
        [as_int(r.get("mtu")) or 0 for r in jumbo] or [0])
    rec["succeeded"] = (rec["gain"] is not None or skipped or stalled or lowered
                        or _all_capped(jumbo))
    if rec["succeeded"]:
        rec["error"] = None
    else:
        rec["error"] = rec["error"] or (
            "the %s direction (%s -> %s) gave no comparison: no verified leg of each size"
            % (direction, rec["source"], rec["dest"]))
    return rec


def _reverse_path(rec, res):
    """REVERSE_PATH: what the dest->source jumbo legs prove about that direction's path.

    A jumbo leg that stalled while the standard ones flowed: a black hole (path MTU unknown,
    not jumbo). A leg whose sending socket had a smaller path MTU than the leg's (the
    kernel's `pmtu`): that MTU, PMTUD `unknown` (the dest's own interface MTU, or a Packet Too
    Big: the result cannot tell which; neither is a black hole, the flow did not stall). A
    verified full-size leg: the path carried its MTU (`not-needed`: nothing lowered it). Else
    nothing is known (`unknown`)."""
    jumbo = _legs(res, "reverse", "jumbo")
    rec["local_mtu"] = None     # the dest's interface MTU is not in the result
    rec["jumbo"] = None
    lowered = [as_int(r.get("pmtu")) for r in jumbo
               if as_int(r.get("pmtu")) and as_int(r.get("mtu"))
               and as_int(r.get("pmtu")) < as_int(r.get("mtu"))]
    crossed = [as_int(r.get("mtu")) for r in jumbo if r.get("succeeded") is True and
               as_int(r.get("mtu"))]
    if any(r.get("stalled") is True for r in jumbo):
        rec["path_mtu"], rec["pmtud"], rec["jumbo"] = None, "blackhole", False
        return
    if lowered:
        rec["path_mtu"], rec["pmtud"] = min(lowered), "unknown"
    elif crossed:
        rec["path_mtu"], rec["pmtud"] = max(crossed), "not-needed"
    else:
        rec["path_mtu"], rec["pmtud"] = None, "unknown"
    rec["jumbo"] = is_jumbo(rec["path_mtu"], rec["target_mtu"], rec["pmtud"])
