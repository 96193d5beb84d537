"""jumbo-report --check: the mesh (or one site's paths, --site) as a monitoring check, in the
plugin format Nagios, Icinga and Checkmk read: one status line, `|` and the performance data,
then one line per path to act on; the exit status is the state.

    jumbo-report --check --store URL [--site NAME] [--stale-hours H] [--sites FILE]
                 [--since DATE] [--until DATE] [--target-mtu N] [--flap N] [store options]

    0 OK        every path of the site decided, measured both ways, recently, none black-holed
    1 WARNING   paths whose newest result is older than --stale-hours (48), paths measured one
                way only (the report's paths_one_way), or some paths undecided (the
                report's unknown_paths and failed_paths)
    2 CRITICAL  a PMTUD black hole (full or per-flow) on one of the site's paths, either way
    3 UNKNOWN   the store cannot be read, holds nothing (in the window), the site has no path,
                no path of it is decided, or the command line is refused: never OK then

The numbers are the report's, under the report's names (model.py): `paths_measured` directed paths
(one per source, destination and IP version), `capable_paths` those jumbo both ways,
`blackholes` those black-holed source to destination (the report's black-hole list),
`reverse_blackholes` those black-holed only the other way, `paths_one_way`,
`unknown_paths`, `failed_paths`, and `stale_paths`; `newest_age` the age of the newest result
in seconds.
"""

import datetime
import sys

from ..core.mtu import MAX_IP_PACKET, MIN_MTU_V6
from ..core.units import parse_time
from . import model
from .errors import NoData, ReportError
from .inputs import parse_date, read_sites
from .safe_output import message

OK, WARNING, CRITICAL, UNKNOWN = 0, 1, 2, 3
STATES = ("OK", "WARNING", "CRITICAL", "UNKNOWN")
STALE_HOURS = 48.0
MAX_DETAILS = 50
# The report's options that shape a report the check never writes.
REPORT_ONLY = {"format": "text", "out": None, "volumes": None, "interval": None,
               "link_speed": 10e9, "limit": 200, "prometheus": None}
_OWN = {}


def add_options(parser):
    """The check's options, on jumbo-report's parser (its --help and man page show them);
    --site only where the report does not have one of its own."""
    group = parser.add_argument_group("monitoring check")
    group.add_argument("--check", action="store_true",
                       help="print one Nagios-style status line with performance data and exit "
                       "0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN")
    group.add_argument("--stale-hours", type=float, default=None, metavar="HOURS",
                       help="with --check: a path whose newest result is older is stale, a "
                       "WARNING (%g)" % STALE_HOURS)
    if "--site" not in parser._option_string_actions:
        _OWN["site"] = True
        group.add_argument("--site", help="with --check: only the paths from or to this site")


def requested(argv):
    """Whether the command line is the check's (its options, with or without --check)."""
    own = ["--check", "--stale-hours"] + (["--site"] if _OWN.get("site") else [])
    return any(a == o or a.startswith(o + "=") for a in argv for o in own)


def main(argv, parser, open_queries):
    """Print the check's lines; its exit status. Anything that goes wrong is UNKNOWN.
    `parser` is jumbo-report's, `open_queries(args)` opens the store its options name."""
    perf, details = "", []
    try:
        args = parser.parse_args(argv)
        if not args.check:
            sys.stderr.write("jumbo-report: --stale-hours%s work only with --check\n"
                             % (" and --site" if _OWN else ""))
            return 2
        code, head, perf, details = run(args, open_queries)
    except SystemExit as done:               # --help, --version
        return done.code or 0
    except NoData as err:
        code, head = UNKNOWN, "%s (nothing to decide on)" % err
    except ReportError as err:
        code, head = UNKNOWN, str(err)
    except KeyboardInterrupt:
        code, head = UNKNOWN, "interrupted"
    except Exception as err:  # noqa: BLE001 - a check is never a traceback: UNKNOWN
        code, head = UNKNOWN, "internal error: %s: %s" % (type(err).__name__, err)
    out = ["JUMBO %s - %s%s" % (STATES[code], _clean(head), " | " + perf if perf else "")]
    sys.stdout.write("\n".join(out + [_clean(x) for x in details]) + "\n")
    sys.stdout.flush()
    return code


def _clean(text):
    # '|' starts the performance data in a plugin's output: none may come from a label
    return message(text).replace("|", "/")


def run(args, open_queries):
    """(state, status line, performance data, detail lines) for parsed arguments."""
    given = [k for k, default in REPORT_ONLY.items() if getattr(args, k, default) != default]
    if given:
        raise ReportError("--check writes no report: %s do not apply" % ", ".join(
            "--" + k.replace("_", "-") for k in sorted(given)))
    stale = STALE_HOURS if args.stale_hours is None else args.stale_hours
    if not 0 < stale <= 24 * 366:
        raise ReportError("--stale-hours must be in (0, %d]" % (24 * 366))
    if not MIN_MTU_V6 <= args.target_mtu <= MAX_IP_PACKET:
        raise ReportError("--target-mtu must be between %d and %d" % (MIN_MTU_V6, MAX_IP_PACKET))
    since, until = parse_date(args.since), parse_date(args.until, end=True)
    seen = []
    opts = model.Options(target=args.target_mtu, since=since, until=until, flap=args.flap,
                         sites=read_sites(args.sites) if args.sites else None,
                         extra=[lambda report, paths, host_mtu, o: seen.append(paths)])
    queries = open_queries(args)
    try:
        model.build(queries, opts)
    finally:
        queries.close()
    now = parse_time(until) if until else datetime.datetime.now(datetime.timezone.utc)
    return verdict(seen[0], args.site, stale, now)


def _age(path, now):
    return (now - parse_time(path.start)).total_seconds()


def _name(p):
    return "%s -> %s (IPv%s)" % (p.source, p.dest, p.ip_version)


def _hole(p):
    where = " at hop %s" % p.blackhole_ip if p.blackhole and p.blackhole_ip else ""
    size = "; %d-byte packets lost" % p.blackhole_size if p.blackhole and p.blackhole_size else ""
    kind = "per-flow black hole" if p.partial else "black hole"
    return "%s %s%s%s" % (_name(p), kind if p.blackhole else "black hole the other way", where, size)


def verdict(paths, site, stale_hours, now):
    """(state, status line, performance data, detail lines) for the report's per-path model
    `paths` (model.Path), the site's only."""
    paths = _site_paths(paths, site)
    where = "%s's paths" % site if site else "the mesh"
    groups = _Groups(paths, stale_hours, now)
    state, head, details = _judge(groups, where, stale_hours)
    if len(details) > MAX_DETAILS:
        details = details[:MAX_DETAILS] + ["... %d more" % (len(details) - MAX_DETAILS)]
    return state, head, groups.perfdata(stale_hours), details


def _site_paths(paths, site):
    """The paths from or to `site` (all of them without one); a site the store does not
    know is an error that lists the sites it does."""
    if site is None:
        return paths
    wanted = site.upper()
    mine = [p for p in paths if wanted in (p.source_site.upper(), p.dest_site.upper())]
    if not mine:
        known = sorted(set(s for p in paths for s in (p.source_site, p.dest_site)))
        raise ReportError("no path from or to site %s in the store (its sites: %s)"
                          % (site, ", ".join(known[:20]) + (" ..." if len(known) > 20 else "")))
    return mine


class _Groups(object):
    """The paths sorted into what a monitoring check reports on."""

    def __init__(self, paths, stale_hours, now):
        self.paths = paths
        self.holes = [p for p in paths if p.blackhole]
        self.reverse_holes = [p for p in paths if p.reverse_blackhole and not p.blackhole]
        self.stale = [p for p in paths if _age(p, now) > stale_hours * 3600]
        self.one_way = [p for p in paths if not p.reverse_known]
        self.unknown = [p for p in paths if p.state == "unknown"]
        self.failed = [p for p in paths if p.state == "failed"]
        self.capable = sum(1 for p in paths if p.capable)
        self.newest = min(_age(p, now) for p in paths)

    def counts(self):
        return "%d paths, %d jumbo both ways" % (len(self.paths), self.capable)

    def perfdata(self, stale_hours):
        return " ".join([
            "paths_measured=%d;;;0" % len(self.paths), "capable_paths=%d;;;0" % self.capable,
            "blackholes=%d;;0;0" % len(self.holes),
            "reverse_blackholes=%d;;0;0" % len(self.reverse_holes),
            "stale_paths=%d;0;;0" % len(self.stale), "paths_one_way=%d;0;;0" % len(self.one_way),
            "unknown_paths=%d;0;;0" % len(self.unknown), "failed_paths=%d;0;;0" % len(self.failed),
            "newest_age=%ds;%d;;0" % (max(0, self.newest), stale_hours * 3600)])


def _judge(g, where, stale_hours):
    """(state, status line, detail lines): the worst of black holes (CRITICAL), nothing
    decided (UNKNOWN), stale/one-way/undecided/failed paths (WARNING), else OK."""
    if g.holes or g.reverse_holes:
        bad = g.holes + g.reverse_holes
        head = "%d black-holed path%s on %s (%s): %s" % (
            len(bad), "" if len(bad) == 1 else "s", where, g.counts(), _hole(bad[0]))
        return CRITICAL, head, [_hole(p) for p in bad]
    if len(g.unknown) + len(g.failed) == len(g.paths):
        head = "no path of %s decided: %d failed, %d with flows unmeasured" % (
            where, len(g.failed), len(g.unknown))
        return UNKNOWN, head, [_name(p) + " " + p.state for p in g.failed + g.unknown]
    parts = [(g.stale, "not measured for %g h" % stale_hours), (g.one_way, "measured one way only"),
             (g.failed, "failed"), (g.unknown, "undecided (flows unmeasured)")]
    if any(ps for ps, _ in parts):
        head = "%s on %s (%s)" % ("; ".join("%d %s" % (len(ps), what) for ps, what in parts if ps),
                                  where, g.counts())
        return WARNING, head, ["%s %s" % (_name(p), what) for ps, what in parts for p in ps]
    head = "%s, none black-holed, all measured both ways within %g h (%s)" % (
        where, stale_hours, g.counts())
    return OK, head, []
