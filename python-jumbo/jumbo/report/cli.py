"""jumbo-report: where the mesh stands against the WLCG jumbo-frame targets.

    jumbo-report --store URL [--ca-file PEM] [--api-key-file FILE | --auth-file FILE]
                 [--no-verify-ssl]
                 [--format text|json|csv|html] [--out FILE] [--volumes CSV]
                 [--sites FILE] [--site NAME] [--since DATE|DURATION] [--until DATE|DURATION]
                 [--target-mtu N]
                 [--interval day|week] [--link-speed BITS] [--flap N] [--limit N]
                 [--prometheus URL [--prometheus-ca-file PEM] [--prometheus-token-file FILE |
                  --prometheus-auth-file FILE] [--prometheus-devices REGEX]
                  [--prometheus-deadline SECONDS]]

Exit status: 0 report written; 2 bad input (arguments, volume matrix, site file, unknown
sites); 3 store or Prometheus missing or down; 4 nothing to report (empty store or empty window).
"""

import argparse
import datetime
import os
import sys

from .. import __version__
from ..core.mtu import DEFAULT_TARGET_MTU, MAX_IP_PACKET, MIN_MTU_V6
from . import actions_options, check, model
from .errors import ReportError, exit_status
from .firefly_used import FireflyUsed
from .html import to_html
from .inputs import parse_date, read_sites, read_volumes
from .prometheus import DEADLINE, Prometheus
from .render import json_pieces, to_csv, to_json, to_text
from .safe_output import write_atomic
from .telemetry import Telemetry, check_devices
from ..archive import credentials
from ..archive.queries import open_queries

FORMATS = ("text", "json", "csv", "html")


class Parser(argparse.ArgumentParser):
    """The coordinator commands' parser: a bad command line raises ReportError, which each
    command turns into its own exit status and message."""

    def error(self, message):
        raise ReportError("%s (see --help)" % message)


def parser():
    p = Parser(prog="jumbo-report", description=__doc__.split("\n\n")[0])
    # %(prog)s at print time: jumbo-alarms renames this parser.
    p.add_argument("--version", action="version", version="%(prog)s " + __version__)
    p.add_argument("--store", required=True,
                   help="sqlite:///PATH (embedded store) or http(s)://[user:pass@]HOST[:PORT][/path]"
                   "[?prefix=P] (OpenSearch)")
    # The archiver's store options (archive data ca-file, _api-key, verify-ssl), so the
    # report reads every archive the archiver can write, through the same client.
    p.add_argument("--ca-file", help="CA bundle (PEM) to trust for an https store")
    p.add_argument("--api-key-file",
                   help="file holding an OpenSearch API key, sent as 'Authorization: ApiKey ...' "
                   "(instead of user:pass in the URL; a file keeps the key out of the process list)")
    p.add_argument("--auth-file",
                   help="file holding 'user:password' for an OpenSearch store (instead of the "
                   "URL, which the process list shows; env %s works too)" % credentials.AUTH_ENV)
    p.add_argument("--no-verify-ssl", dest="verify_ssl", action="store_false",
                   help="do not check the https store's certificate and host name")
    p.add_argument("--format", choices=FORMATS, default="text")
    p.add_argument("--out", help="write here instead of standard output")
    p.add_argument("--volumes", help="CSV source_site,dest_site,bytes: traffic-weighted share")
    p.add_argument("--sites", help="host (or IP) to site file: 'host site' lines or a JSON object")
    p.add_argument("--since", help="first day (YYYY-MM-DD or ISO time), inclusive, or an ISO 8601 "
                   "duration before now (P7D, PT12H, P2W)")
    p.add_argument("--until", help="last day (YYYY-MM-DD, inclusive) or ISO time (exclusive), or "
                   "a duration before now")
    p.add_argument("--site", metavar="NAME",
                   help="one site's page: only the paths it is the source or the dest of")
    p.add_argument("--target-mtu", type=int, default=DEFAULT_TARGET_MTU,
                   help="the MTU that counts as jumbo (%d)" % DEFAULT_TARGET_MTU)
    p.add_argument("--interval", choices=("day", "week"), help="trend bucket (default: by window)")
    p.add_argument("--link-speed", type=float, default=10e9,
                   help="cap for the expected-gain estimate, bit/s (default 10e9)")
    p.add_argument("--flap", type=int, default=3, help="state changes that make a path flapping (3)")
    p.add_argument("--limit", type=int, default=200, help="longest lists in the output (200)")
    # Measured `used` (flowd-go's flow metrics) and `configured` (node exporter's interface
    # MTUs) from a Prometheus server: docs/coordinator-telemetry.md.
    p.add_argument("--prometheus", metavar="URL",
                   help="Prometheus server (http(s)://HOST[:PORT][/path]) with flowd-go and node "
                   "exporter metrics: used and configured measured")
    p.add_argument("--prometheus-ca-file", help="CA bundle (PEM) for an https Prometheus")
    p.add_argument("--prometheus-no-verify-ssl", dest="prometheus_verify", action="store_false",
                   help="do not check the https Prometheus's certificate")
    p.add_argument("--prometheus-token-file", help="file holding a bearer token for Prometheus")
    p.add_argument("--prometheus-auth-file", help="file holding user:password (basic auth)")
    p.add_argument("--prometheus-deadline", metavar="SECONDS", type=float, default=None,
                   help="all the reads from Prometheus of one run end within this (300)")
    p.add_argument("--prometheus-devices", metavar="REGEX",
                   help="interfaces whose MTU is the host's (default: all but loopback, "
                   "container, bridge and tunnel interfaces)")
    check.add_options(p)
    return p


def report_parser():
    """jumbo-report's own parser: the shared one (jumbo-alarms builds on it) and what only the
    report does with its result."""
    p = parser()
    # Measured `used` from the fireflies jumbo-fireflies stored in the same store.
    p.add_argument("--fireflies", action="store_true",
                   help="used from the fireflies jumbo-fireflies stored in --store (bytes at "
                   "jumbo-sized MSS; those with no MSS stated)")
    actions_options.add_arguments(p)    # --owners, --no-resolve, --resolve-budget, --target-date
    return p


def telemetry_hook(args):
    """The report hook reading Prometheus, or None without --prometheus."""
    extra = (args.prometheus_ca_file, args.prometheus_token_file, args.prometheus_auth_file,
             args.prometheus_devices, args.prometheus_deadline)
    if args.prometheus is None:
        if any(x is not None for x in extra) or not args.prometheus_verify:
            raise ReportError("the --prometheus-* options need --prometheus URL")
        return None
    if args.prometheus_ca_file is not None and not os.path.isfile(args.prometheus_ca_file):
        raise ReportError("--prometheus-ca-file %s: no such file" % args.prometheus_ca_file)
    prom = Prometheus(args.prometheus, ca_file=args.prometheus_ca_file,
                      token_file=args.prometheus_token_file, auth_file=args.prometheus_auth_file,
                      verify_ssl=args.prometheus_verify,
                      deadline=DEADLINE if args.prometheus_deadline is None else args.prometheus_deadline)
    return Telemetry(prom, devices=check_devices(args.prometheus_devices))


def firefly_hook(args):
    """The report hook reading the fireflies in the store, or None without --fireflies."""
    return FireflyUsed(args.store, store_options(args)) if args.fireflies else None


def store_options(args):
    """The OpenSearch client options (jumbo.archive.opensearch.store.OpenSearchStore.from_url) from
    the command line, checked: the files exist and are read, and only an https store takes them."""
    options = {}
    if args.ca_file is not None:
        if not os.path.isfile(args.ca_file):
            raise ReportError("--ca-file %s: no such file" % args.ca_file)
        options["ca_file"] = args.ca_file
    if args.api_key_file is not None:
        try:
            with open(args.api_key_file, encoding="utf-8") as handle:
                key = handle.read().strip()
        except (OSError, UnicodeDecodeError) as err:
            raise ReportError("--api-key-file %s: %s" % (args.api_key_file, err))
        if not key or any(c.isspace() for c in key):
            raise ReportError("--api-key-file %s: expected one API key (no spaces)" % args.api_key_file)
        options["api_key"] = key
    try:
        login = credentials.login(args.auth_file)
    except credentials.CredentialsError as err:
        raise ReportError(str(err))
    if login and args.store.startswith(("http://", "https://")):
        if "api_key" in options:
            raise ReportError("give either --api-key-file or a user:password login, not both")
        options["auth"] = login
    elif args.auth_file:
        raise ReportError("--auth-file is for an OpenSearch store (http(s)://...)")
    if not args.verify_ssl:
        options["verify_ssl"] = False
    if options and not args.store.startswith(("http://", "https://")):
        raise ReportError("--ca-file, --api-key-file and --no-verify-ssl are for an OpenSearch "
                          "store (http(s)://...)")
    if ("ca_file" in options or "verify_ssl" in options) and not args.store.startswith("https://"):
        raise ReportError("--ca-file and --no-verify-ssl need an https:// store")
    return options


def _site_name(name):
    if name is None:
        return None
    name = name.strip()
    if not name or len(name) > 200 or any(ord(c) < 32 for c in name):
        raise ReportError("--site: expected a site name, got %r" % name[:200])
    return name


def render(report, fmt):
    if fmt == "json":
        return to_json(report)
    if fmt == "csv":
        return to_csv(report)
    if fmt == "html":
        return to_html(report)
    return to_text(report)


def run(argv=None):
    """Parse, build, render; returns (report, text, --out). Raises ReportError on bad input."""
    report, args = build_report(argv)
    return report, render(report, args.format), args.out


def render_pieces(report, fmt):
    """The rendering as pieces of text to write one after another: JSON streamed (its
    per-path list is most of it), the other formats whole."""
    if fmt == "json":
        return json_pieces(report)
    return (render(report, fmt),)


def build_report(argv=None):
    """Parse and build: (the report dict, the parsed arguments). ReportError on bad input."""
    args = report_parser().parse_args(argv)
    if not MIN_MTU_V6 <= args.target_mtu <= MAX_IP_PACKET:
        raise ReportError("--target-mtu must be between %d and %d" % (MIN_MTU_V6, MAX_IP_PACKET))
    now = datetime.datetime.utcnow()    # one "now" for both ends of a relative window
    since = parse_date(args.since, now=now)
    until = parse_date(args.until, end=True, now=now)
    if since and until and since >= until:
        raise ReportError("--since %s is not before --until %s" % (args.since, args.until))
    volumes = read_volumes(args.volumes) if args.volumes else None
    sites = read_sites(args.sites) if args.sites else None
    opts = model.Options(target=args.target_mtu, since=since, until=until, interval=args.interval,
                         volumes=volumes, sites=sites, link_speed=args.link_speed, flap=args.flap,
                         limit=args.limit,
                         extra=[h for h in (telemetry_hook(args), firefly_hook(args),
                                            actions_options.hook(args)) if h],
                         site=_site_name(args.site))
    queries = open_queries(args.store, **store_options(args))
    try:
        report = model.build(queries, opts)
    finally:
        queries.close()
    return report, args


def main(argv=None):
    if check.requested(sys.argv[1:] if argv is None else argv):
        return check.main(argv, parser(), lambda args: open_queries(args.store, **store_options(args)))

    def step():
        report, args = build_report(argv)
        pieces = render_pieces(report, args.format)
        if args.out:
            write_atomic(args.out, pieces)
        else:
            for piece in pieces:
                sys.stdout.write(piece)
            sys.stdout.flush()
    return exit_status("jumbo-report", step)


if __name__ == "__main__":
    sys.exit(main())
