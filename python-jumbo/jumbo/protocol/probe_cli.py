"""`jumbocheck DEST [options] [--json]`: the probe engine without pScheduler.

Options are those of `pscheduler task pmtu` (parsed by jumbo.testtype.spec.cli_to_spec, so
there is one parser); DEST may be given alone instead of --dest. `--json` prints exactly the
result object. Exit status: 0 measured (a black hole included), 1 could not measure, 2 usage
error. The console script `jumbocheck` (setup.py); in the protocol layer because it reads a
command line and speaks the pmtu test's words, over the probe engine.
"""

import json
import sys
import threading

from .. import __version__
from ..core.errors import JumboError
from ..probe import measure
from ..core.result.pmtu import Flow, Hop, PmtuResult, Ptb
from ..testtype.render import pmtu_result, verdict
from ..testtype.values import rtt_ms
from ..testtype.spec import CliError, cli_to_spec, option_help

# Spec keys the pmtu test has and a run without pScheduler cannot serve.
NEEDS_NODES = ("reverse", "reflector", "source-node", "dest-node")

USAGE = "usage: jumbocheck DEST [--source ADDR] [-4|-6] [--target-mtu N] [--max-mtu N] " \
        "[--min-mtu N] [--flows N] [--hops] [--timeout S] [--json] [--quiet]"


def _split(argv):
    """(spec argv with --dest, want_json, quiet) from `DEST [options]` in any order."""
    want_json = quiet = False
    rest = []
    dest = None
    takes_value = {"--source", "--source-node", "--dest", "--dest-node", "--ip-version",
                   "--target-mtu", "--max-mtu", "--min-mtu", "--flows", "--timeout"}
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--json":
            want_json = True
        elif arg in ("-q", "--quiet"):
            quiet = True
        elif arg in takes_value:
            rest += argv[i:i + 2]
            i += 1
        elif arg.startswith("-") or dest is not None:
            rest.append(arg)
        else:
            dest = arg
        i += 1
    if dest is not None:
        rest = ["--dest", dest] + rest
    return rest, want_json, quiet


class Progress(object):
    """The run's phases on stderr, one line each, once the run has lasted SHOW_AFTER seconds
    (the phase under way then, and every later one): a run of a few milliseconds stays
    silent, one of 8-10 s says what it is doing. Never on stdout (--json stays parseable)."""

    SHOW_AFTER = 1.0

    def __init__(self, stream):
        self.stream = stream
        self.lock = threading.Lock()
        self.phase = None
        self.showing = False
        self.timer = threading.Timer(self.SHOW_AFTER, self._start_showing)
        self.timer.daemon = True

    def __enter__(self):
        self.timer.start()
        return self

    def __exit__(self, *exc):
        self.timer.cancel()
        with self.lock:
            self.showing = False  # nothing after the result

    def __call__(self, phase):
        with self.lock:
            self.phase = phase
            if self.showing:
                self._write(phase)

    def _start_showing(self):
        with self.lock:
            self.showing = True
            if self.phase:
                self._write(self.phase)

    def _write(self, phase):
        self.stream.write("jumbocheck: %s ...\n" % phase)
        self.stream.flush()


def help_text():
    return "\n".join([
        USAGE, "",
        "Measures the exact path MTU to DEST, PMTUD health and black holes, from this host and",
        "without pScheduler (as an unprivileged user: ICMP echo where net.ipv4.ping_group_range",
        "allows it, UDP otherwise). The reverse path and probing through the dest's reflector",
        "need the dest's pScheduler node: use `pscheduler task pmtu --reverse` / `--reflector`.",
        "",
        option_help(skip=["--" + key for key in NEEDS_NODES]
                    + ["--no-reverse", "--no-reflector"]).rstrip(),
        "  --json                Print the result object (the pmtu test's result) as JSON",
        "  -q, --quiet           No progress lines (on stderr, one per phase, for runs",
        "                        over a second)",
        "  --version             Print the suite's version and exit",
        "",
        "Exit status: 0 measured (a black hole included), 1 could not measure, 2 usage error.",
        "JUMBO_PROBE_DEBUG=1 writes every probe round and its outcome on stderr."])


def text(result):
    """Verdict first (the very line `pscheduler task pmtu` prints), then the details; the
    result (a PmtuResult, or its JSON) read once (render.pmtu_result)."""
    result = pmtu_result(result)
    lines = [verdict(result)]
    lines.append("Dest %s, target MTU %s, PMTUD %s" % (
        result.dest_ip, result.target_mtu, result.pmtud))
    lines.append("Local MTU %s, IPv%s, method %s, %d probes in %.3f s, round trip %s" % (
        result.local_mtu, result.ip_version, result.method,
        result.probes or 0, result.elapsed or 0.0, rtt_ms(result.rtt)))
    lines += _flow_lines(result) + _hop_lines(result) + _ptb_lines(result)
    if result.diags:
        lines.append("Notes: %s" % result.diags)
    return "\n".join(lines)


def _parts(value, kind):
    return [item for item in value or [] if isinstance(item, kind)]


def _flow_lines(result):
    """One line per flow, only when there are several (one flow is the verdict itself)."""
    flows = _parts(result.flows, Flow)
    if len(flows) < 2:
        return []
    return ["  flow %s%s: path MTU %s, PMTUD %s" % (
        flow.flow, " (source port %s)" % flow.source_port if flow.source_port else " (ICMP echo)",
        flow.path_mtu, flow.pmtud) for flow in flows]


def _hop_lines(result):
    return ["  hop %2d  %-28s mtu %-6s rtt %s" % (hop.ttl, hop.ip or "*", hop.mtu or "?", rtt_ms(hop.rtt))
            for hop in _parts(result.hops, Hop)]


def _ptb_lines(result):
    return ["  packet-too-big from %s: mtu %s%s" % (ptb.sender, ptb.mtu, "" if ptb.useful else " (not usable)")
            for ptb in _parts(result.ptb, Ptb)]


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if any(a in ("-h", "--help") for a in argv):
        print(help_text())
        return 0
    if "--version" in argv:
        print("jumbocheck %s" % __version__)
        return 0
    rest, want_json, quiet = _split(argv)
    if "--dest" not in rest:
        sys.stderr.write("%s\njumbocheck: DEST is required\n" % USAGE)
        return 2
    try:
        spec = cli_to_spec(rest)
    except CliError as err:
        sys.stderr.write("%s\njumbocheck: %s\n" % (USAGE, str(err).strip()))
        return 2
    for key in NEEDS_NODES:
        if spec.get(key):
            sys.stderr.write("%s\njumbocheck: --%s needs pScheduler nodes: use "
                             "`pscheduler task pmtu --%s ...`\n" % (USAGE, key, key))
            return 2
    try:
        if quiet:
            result = PmtuResult.from_json(measure(spec).as_json())
        else:
            with Progress(sys.stderr) as progress:
                result = PmtuResult.from_json(measure(spec, progress=progress).as_json())
    except JumboError as err:
        if want_json:
            print(json.dumps({"schema": 1, "succeeded": False, "error": str(err),
                              "diags": None}))
        sys.stderr.write("jumbocheck: %s\n" % err)
        return 1
    except KeyboardInterrupt:
        sys.stderr.write("jumbocheck: interrupted\n")
        return 1
    except Exception as err:  # noqa: BLE001 - never a traceback for the operator
        sys.stderr.write("jumbocheck: internal error: %s: %s\n" % (type(err).__name__, err))
        return 1
    if want_json:
        print(json.dumps(result.as_json(), sort_keys=True))
    else:
        print(text(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
