"""The `jumbo-alarms` command (the events and their format: alarms.py)."""

import datetime
import json
import sys

from ..core.mtu import MAX_IP_PACKET, MIN_MTU_V6
from ..core.units import unix_time
from . import alarm_state, alarms, alarms_index, cli, model
from .errors import NoData, ReportError, exit_status
from .inputs import parse_date, read_sites

ALARMS_INDEX = alarms_index.ALARMS_INDEX


# The report's options jumbo-alarms reads (the store, its credentials, the window, the sites,
# the target and Prometheus); the rest (--format, --volumes, --interval, --link-speed, --limit)
# shape a report it never writes: refused, not silently ignored.
REPORT_OPTIONS = ("version", "store", "ca_file", "api_key_file", "auth_file", "verify_ssl", "sites",
                  "since", "until", "target_mtu", "flap", "prometheus", "prometheus_ca_file",
                  "prometheus_verify", "prometheus_token_file", "prometheus_auth_file",
                  "prometheus_deadline", "prometheus_devices", "fireflies")
LIMIT = 10 ** 6     # every path and change the events are taken from: no list is cut short


def parser():
    report = cli.report_parser()
    p = type(report)(prog="jumbo-alarms", description="MTU events in the WLCG/OSG network alarm "
                     "service's format (JSON lines), each raised once while its condition holds")
    events = p.add_argument_group("events")
    events.add_argument("--state", required=True, help="state file of the events raised and still holding")
    events.add_argument("--out", help="append the events (JSON lines) here instead of standard output")
    events.add_argument("--index", action="store_true",
                        help="also index new events into the OpenSearch store's %s index" % ALARMS_INDEX)
    events.add_argument("--lock-wait", type=float, default=600.0,
                        help="seconds to wait for another run holding the state's lock (600)")
    events.add_argument("--min-sites", type=int, default=5,
                        help="other sites that make a site event instead of pair events (5)")
    events.add_argument("--hop-min-sites", type=int, default=2,
                        help="sites whose black holes at one hop make one shared event (2)")
    events.add_argument("--share-drop", type=float, default=50.0,
                        help="percent fall of a site's jumbo share against its baseline (50)")
    events.add_argument("--recent-days", type=float, default=3.0, help="the recent period (3 days)")
    events.add_argument("--baseline-days", type=float, default=21.0,
                        help="the baseline period before it (21 days)")
    events.add_argument("--recent-since", help="start of the recent period (default: --until minus "
                        "--recent-days)")
    shared = p.add_argument_group("the store and the results read (as jumbo-report's)")
    for action in report._actions:
        if action.dest in REPORT_OPTIONS:
            shared._add_action(action)
    return p


def _iso(epoch):
    return datetime.datetime.utcfromtimestamp(epoch).strftime("%Y-%m-%dT%H:%M:%SZ")


def _build(args, since, until, hooks):
    opts = model.Options(target=args.target_mtu, since=since, until=until,
                         sites=read_sites(args.sites) if args.sites else None,
                         limit=LIMIT, flap=args.flap, extra=hooks)
    queries = cli.open_queries(args.store, **cli.store_options(args))
    try:
        return model.build(queries, opts)
    finally:
        queries.close()


def _hooks(args):
    """The report hooks jumbo-alarms' options ask for: Prometheus' used, the fireflies'."""
    return [h for h in (cli.telemetry_hook(args), cli.firefly_hook(args)) if h is not None]


def _shares(args, base, split, until):
    """{site: (baseline share, recent share, basis)}; {} when a period holds no results. The
    used share per site where traffic was measured in both periods (Prometheus' telemetry,
    else the fireflies'), else the capable share of its paths."""
    out = {}
    parts = []
    for since, end in ((base, split), (split, until)):
        try:
            parts.append(_build(args, since, end, _hooks(args)))
        except NoData:
            return {}
    b, r = parts
    for section, basis in (("telemetry", "bytes"), ("fireflies", "fireflies bytes")):
        if b.get(section) and r.get(section):
            bs, rs = b[section].get("sites") or {}, r[section].get("sites") or {}
            for site in bs:
                out[site.upper()] = (bs[site]["used"], rs.get(site, {}).get("used"), basis)
            return out
    rsites = {s["site"]: s["capable"] for s in r["sites"]}
    for s in b["sites"]:
        out[s["site"].upper()] = (s["capable"], rsites.get(s["site"]), "paths")
    return out


def run(argv=None):
    args = parser().parse_args(argv)
    if not MIN_MTU_V6 <= args.target_mtu <= MAX_IP_PACKET:
        raise ReportError("--target-mtu must be between %d and %d" % (MIN_MTU_V6, MAX_IP_PACKET))
    for name in ("min_sites", "hop_min_sites"):
        if getattr(args, name) < 1:
            raise ReportError("--%s must be at least 1" % name.replace("_", "-"))
    if not (0 < args.share_drop <= 100 and 0 < args.recent_days and 0 < args.baseline_days):
        raise ReportError("--share-drop must be in (0, 100], the periods positive")
    if not 0 <= args.lock_wait <= 86400:
        raise ReportError("--lock-wait must be in [0, 86400] seconds")
    if args.index and not args.store.startswith(("http://", "https://")):
        raise ReportError("--index needs an OpenSearch store (http(s)://...)")
    now = unix_time(datetime.datetime.utcnow().strftime("%Y-%m-%dT%H:%M:%SZ"))
    until = unix_time(parse_date(args.until, end=True)) if args.until else now
    split = unix_time(parse_date(args.recent_since)) if args.recent_since else \
        until - args.recent_days * 86400
    base = split - args.baseline_days * 86400
    since = parse_date(args.since) or _iso(base)
    with alarm_state.Lock(args.state, wait=args.lock_wait):
        return _raise(args, now, since, base, split, until)


def _raise(args, now, since, base, split, until):
    """One run, under the state's lock: the events, their lines, the index, the state."""
    active = alarm_state.load(args.state)
    collector = alarms.Collector()
    report = _build(args, since, _iso(until), [collector] + _hooks(args))
    shares = _shares(args, _iso(base), _iso(split), _iso(until))
    current = alarms.events(report, collector, (since, _iso(until)), args.min_sites,
                            args.hop_min_sites, shares, args.share_drop)
    after, owed_lines, owed_index = alarm_state.reconcile(active, current, _iso(now), args.index)
    new = [after[k]["event"] for k in owed_lines]
    lines = "".join(json.dumps(ev, sort_keys=False) + "\n" for ev in new)
    if args.out:
        alarm_state.append_lines(args.out, lines)
    else:
        sys.stdout.write(lines)
        sys.stdout.flush()
    for k in owed_lines:
        after[k]["emitted"] = True
    # cleared events still owed to the index stay until they are stored
    owed_cleared = dict((k, active[k]) for k in owed_index if k not in after)
    alarm_state.save(args.state, dict(after, **owed_cleared))   # the lines are out: not again
    cleared = len(set(active) - set(after))
    if owed_index:
        entries = dict(owed_cleared, **after)
        by_alarm = dict((entries[k]["alarm_id"], k) for k in owed_index)

        def stored(alarm_id):
            entries[by_alarm[alarm_id]]["indexed"] = True
        try:
            alarms_index.index_events(args.store, cli.store_options(args),
                                      [(entries[k]["alarm_id"], entries[k]["event"])
                                       for k in owed_index], stored)
        finally:
            # the cleared ones are dropped once indexed, kept while still owed
            keep = dict(after, **dict((k, entries[k]) for k in owed_index
                                      if k not in after and entries[k]["indexed"] is False))
            alarm_state.save(args.state, keep)
    sys.stderr.write("jumbo-alarms: %d new event(s), %d still holding, %d cleared%s\n"
                     % (len(new), len(after) - len(new), cleared,
                        ", %d indexed" % len(owed_index) if owed_index else ""))
    return new


def main(argv=None):
    return exit_status("jumbo-alarms", lambda: run(argv))


if __name__ == "__main__":
    sys.exit(main())
