"""`python -m jumbo.tool.throughput serve|client|duration|port`: one side of the paired legs
by hand, JSON out (what the tool's run does inside its slot, without pScheduler).

    # on the dest: one iperf3 server for the legs of this spec, until the last leg or --deadline
    python3 -m jumbo.tool.throughput serve --spec '{"throughput": {}}' --port 5601
    # on the source: the legs against it, after the path MTU is known (or not: --path-mtu)
    python3 -m jumbo.tool.throughput client --spec '{"throughput": {}}' --port 5601 \\
        --dest 198.51.100.2 --path-mtu 9000
    python3 -m jumbo.tool.throughput duration --spec '{"throughput": {"rounds": 2}}'
    python3 -m jumbo.tool.throughput port

`--spec` is a pmtu-shaped spec with a `throughput` object (jumbo.core.spec.internal_spec of a
jumbo-throughput spec). No authentication: both ends run without iperf3 credentials.
Exit status 0 with one JSON line, 1 with a message on stderr, 2 on a usage error.
"""

import argparse
import json
import sys

from . import choose_port, duration, run_legs, serve


def _parser():
    parser = argparse.ArgumentParser(prog="python -m jumbo.tool.throughput",
                                     description="Paired 1500/9000 iperf3 legs (JSON out).")
    sub = parser.add_subparsers(dest="command")
    sub.add_parser("port", help="a free TCP port for the server")
    sub.add_parser("duration", help="seconds the legs are given").add_argument(
        "--spec", required=True, help="the test spec, JSON text")
    for name in ("serve", "client"):
        cmd = sub.add_parser(name, help="the dest's iperf3 server" if name == "serve"
                             else "the source's legs")
        cmd.add_argument("--spec", required=True, help="the test spec, JSON text")
        cmd.add_argument("--port", type=int, required=True)
        cmd.add_argument("--deadline", type=float, default=None, help="Unix time")
    cmd = sub.choices["serve"]
    cmd.add_argument("--bind", default=None)
    cmd = sub.choices["client"]
    cmd.add_argument("--dest", required=True)
    cmd.add_argument("--path-mtu", type=int, default=None)
    cmd.add_argument("--local-mtu", type=int, default=None)
    cmd.add_argument("--ip-version", type=int, choices=[4, 6], default=4)
    return parser


def _answer(args):
    spec = json.loads(args.spec) if hasattr(args, "spec") else None
    if args.command == "port":
        return {"port": choose_port()}
    if args.command == "duration":
        return {"duration": duration(spec)}
    if args.command == "serve":
        return serve(spec, args.port, args.deadline, args.bind)
    return run_legs(spec, args.dest, args.port, args.path_mtu, args.ip_version,
                    args.deadline, args.local_mtu)


def main(argv=None):
    parser = _parser()
    args = parser.parse_args(argv)
    if not args.command:
        parser.print_usage(sys.stderr)
        return 2
    try:
        out = _answer(args)
    except (ValueError, KeyError, TypeError) as err:
        sys.stderr.write("throughput: %s\n" % err)
        return 1
    sys.stdout.write(json.dumps(out, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
