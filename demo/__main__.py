"""`make demo`: build the lab mesh, measure every directed pair, archive, report, check.

    python -m demo [--quick] [--archive URL | --opensearch] [--keep-going] [...]

Stages (each says what it does while it runs; a stage whose part of the suite is missing
is skipped with the reason, and the exit status is then non-zero):
  1. build the mesh of six sites in network namespaces (demo/mesh.py)
  2. measure: one `pmtu` task per directed pair through the plugin harness the tests use,
     the tool running as the unprivileged user `jumbotest`; both participants where the spec
     needs them (reverse path); on a few pairs the paired 1500/9000 throughput follows as
     its own `jumbo-throughput` run
  3. archive every result with the `jumbo` archiver's `archive` process into the store
  4. report: `jumbo-report` as text on the terminal and as an HTML page in a file
  5. self-check: every measured value and the report's headline against the lab's truth
The lab is always torn down, also on Ctrl-C, SIGTERM or a failure.
"""

import argparse
import os
import signal
import sys

from . import parts  # first: it sets sys.path for lab/ and the library first
from . import mesh
from .run import Demo
from .tasks import Interrupted

DEFAULT_OUT = os.path.join(parts.ROOT, "var", "demo")


# What each option does, as --help says it (the flows and loss texts take their defaults).
HELP = {
    "--quick": "a few pairs covering each case and one short throughput phase "
               "(about a minute) instead of all 30 directed pairs",
    "--archive": "store to archive into: sqlite:///PATH (default: an embedded "
                 "store under the output directory) or http://HOST:PORT (OpenSearch)",
    "--opensearch": "start the local test OpenSearch (scripts/opensearch.sh) and "
                    "archive into it",
    "--keep-going": "measure every pair even after a step failed (default: stop "
                    "measuring at the first failure, then archive and report what "
                    "was measured)",
    "--concurrency": "pairs measured at the same time (default 3; pairs running "
                     "together never share a site)",
    "--no-throughput": "skip the paired 1500/9000 throughput (the jumbo-throughput runs)",
    "--flows": "flows per pair for the ECMP view (default: the mesh template's "
               "pmtu spec, %d)",
    "--ip-version": "measure over IPv4 (default) or IPv6 (host names SITE6 in the lab)",
    "--loss": "random loss on the tokyo path (default %d)",
    "--out": "where the store, report and results go (default var/demo)",
    "--pairs": "measure only these directed pairs (site names)",
}


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog="make demo DEMO_ARGS=... (or python -m demo)",
        description="Measure jumbo-frame health across a lab mesh of six WLCG-like sites, "
                    "archive the results and print the adoption report.")
    switch = dict(action="store_true")
    count = dict(type=int, metavar="N")
    parser.add_argument("--quick", help=HELP["--quick"], **switch)
    parser.add_argument("--archive", metavar="URL", help=HELP["--archive"])
    parser.add_argument("--opensearch", help=HELP["--opensearch"], **switch)
    parser.add_argument("--keep-going", help=HELP["--keep-going"], **switch)
    parser.add_argument("--concurrency", default=3, help=HELP["--concurrency"], **count)
    parser.add_argument("--no-throughput", help=HELP["--no-throughput"], **switch)
    parser.add_argument("--flows", default=None, help=HELP["--flows"] % mesh.template_pmtu_spec(4)["flows"],
                        **count)
    parser.add_argument("--ip-version", type=int, choices=(4, 6), default=4, help=HELP["--ip-version"])
    parser.add_argument("--loss", type=int, default=mesh.LOSS_PERCENT, metavar="PERCENT",
                        help=HELP["--loss"] % mesh.LOSS_PERCENT)
    parser.add_argument("--out", default=DEFAULT_OUT, metavar="DIR", help=HELP["--out"])
    parser.add_argument("--pairs", metavar="SRC:DST,...", help=HELP["--pairs"])
    args = parser.parse_args(argv)
    if args.concurrency < 1:
        parser.error("--concurrency must be at least 1")
    if not 0 <= args.loss <= 20:
        parser.error("--loss must be between 0 and 20 (percent): a lossy path, not a dead one")
    if args.flows is not None and not 1 <= args.flows <= 64:
        parser.error("--flows must be between 1 and 64")
    if args.archive and args.opensearch:
        parser.error("give either --archive URL or --opensearch, not both")
    if args.pairs:
        chosen = []
        for item in args.pairs.split(","):
            source, _, dest = item.strip().partition(":")
            if source not in mesh.SITES or dest not in mesh.SITES or source == dest:
                parser.error("--pairs: %r is not SRC:DST with two different sites of %s"
                             % (item, ", ".join(mesh.SITES)))
            chosen.append((source, dest))
        args.pairs = chosen
    return args


def _on_sigterm(signum, frame):
    raise Interrupted("signal %d" % signum)


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if os.geteuid() != 0:
        sys.stderr.write("demo: needs root to build network namespaces (run `sudo make demo`)\n")
        return 2
    # Ctrl-C arrives as KeyboardInterrupt; SIGTERM and SIGHUP are turned into the same path,
    # so the lab's context manager always runs.
    signal.signal(signal.SIGTERM, _on_sigterm)
    signal.signal(signal.SIGHUP, _on_sigterm)
    demo = Demo(args)
    try:
        return demo.main()
    except (KeyboardInterrupt, Interrupted) as why:
        sys.stdout.flush()
        sys.stderr.write("\ndemo: interrupted (%s); the lab has been torn down\n"
                         % (why or "Ctrl-C"))
        return 130
    except Exception as err:  # noqa: BLE001 - a clean message, never a traceback
        sys.stdout.flush()
        sys.stderr.write("\ndemo: failed: %s: %s\n(the lab has been torn down; "
                         "JUMBO_DEBUG=1 shows the traceback)\n" % (type(err).__name__, err))
        if os.environ.get("JUMBO_DEBUG"):
            import traceback
            traceback.print_exc()
        return 1
    finally:
        demo.cleanup()


if __name__ == "__main__":
    sys.exit(main())
