"""jumbo-fireflies: collect the fireflies WLCG sites send, for the report's measured `used`.

    jumbo-fireflies --store URL --sites FILE [--listen ADDRESS] [--port N]
                    [--flush SECONDS] [--expiry SECONDS] [--max-flows N]
                    [--allow-from PREFIX ...] [--id NAME]
                    [--ca-file PEM] [--api-key-file FILE | --auth-file FILE] [--no-verify-ssl]

Listens on UDP for fireflies (flowd-go's: RFC 5424 syslog-wrapped or bare JSON), keeps per
flow the newest MSS, PMTU and byte counter (jumbo.archive.firefly_flows), and every --flush
seconds stores per site pair and IP version the bytes sent at jumbo-sized MSS, at standard MSS
and with the MSS unknown (jumbo.archive.firefly_store). SIGTERM or SIGINT: stores what it holds
and exits 0. A flush the store refuses is kept and stored by the next one.

Exit status: 0 stopped by a signal, everything stored; 2 bad input (arguments, site file);
3 the store could not be opened, or what was held at the stop could not be stored.
"""

import ipaddress
import re
import select
import signal
import socket
import sys
import time

from .. import __version__
from ..archive import firefly
from ..archive.errors import StoreError
from ..archive.firefly_flows import FlowTable
from ..archive.firefly_store import open_fireflies
from .cli import Parser, store_options
from .errors import ReportError, exit_status
from .safe_output import message
from .inputs import read_sites
from .telemetry import SiteMap

DEFAULT_PORT = 10514        # flowd-go's collectorPort and destinationPort
_VALUES = re.compile(r"'[^']*'|\"[^\"]*\"|[0-9a-fA-F:.]*[0-9][0-9a-fA-F:.]*")


def parser():
    p = Parser(prog="jumbo-fireflies", description=__doc__.split("\n\n")[0])
    p.add_argument("--version", action="version", version="%(prog)s " + __version__)
    p.add_argument("--store", required=True,
                   help="sqlite:///PATH (embedded store) or http(s)://HOST[:PORT] (OpenSearch)")
    p.add_argument("--sites", required=True,
                   help="address (or CIDR prefix) to site file, as jumbo-report's --sites")
    p.add_argument("--listen", default="::", help="address to listen on (default :: , both families)")
    p.add_argument("--port", type=int, default=DEFAULT_PORT,
                   help="UDP port (default %d, flowd-go's collector port)" % DEFAULT_PORT)
    p.add_argument("--flush", type=float, default=60.0, help="seconds between stores (60)")
    p.add_argument("--expiry", type=float, default=600.0,
                   help="seconds after which a silent flow is forgotten (600)")
    p.add_argument("--max-flows", type=int, default=100000,
                   help="flows held at most; new ones beyond are refused and counted (100000)")
    p.add_argument("--allow-from", action="append", metavar="PREFIX",
                   help="take fireflies only from senders in this prefix (repeatable; default any)")
    p.add_argument("--id", help="this collector's name in the store (default HOST:PORT)")
    p.add_argument("--ca-file", help="CA bundle (PEM) to trust for an https store")
    p.add_argument("--api-key-file", help="file holding an OpenSearch API key")
    p.add_argument("--auth-file", help="file holding 'user:password' for an OpenSearch store")
    p.add_argument("--no-verify-ssl", dest="verify_ssl", action="store_false",
                   help="do not check the https store's certificate and host name")
    return p


def _check(args):
    if not 0 <= args.port <= 65535:
        raise ReportError("--port %d: not a UDP port" % args.port)
    if not 1 <= args.flush <= 86400:
        raise ReportError("--flush must be between 1 and 86400 seconds")
    if not args.flush <= args.expiry <= 7 * 86400:
        raise ReportError("--expiry must be between --flush and 7 days")
    if not 1 <= args.max_flows <= 10000000:
        raise ReportError("--max-flows must be between 1 and 10000000")
    try:
        args.allow = [ipaddress.ip_network(p, strict=False) for p in args.allow_from or ()]
        ipaddress.ip_address(args.listen)
    except ValueError as err:
        raise ReportError("--allow-from/--listen: %s" % err)


def _socket(listen, port):
    family = socket.AF_INET6 if ":" in listen else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_DGRAM)
    if family == socket.AF_INET6 and listen == "::":
        sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    try:
        sock.bind((listen, port))
    except OSError as err:
        sock.close()
        raise ReportError("cannot listen on %s port %d: %s" % (listen, port, err), status=3)
    sock.setblocking(False)
    return sock


def _allowed(allow, sender):
    if not allow:
        return True
    addr = ipaddress.ip_address(sender.split("%")[0])
    if addr.version == 6 and addr.ipv4_mapped:
        addr = addr.ipv4_mapped
    return any(addr.version == net.version and addr in net for net in allow)


class Collector(object):
    def __init__(self, args):
        sites = SiteMap(read_sites(args.sites), [])
        self.table = FlowTable(sites.site, max_flows=args.max_flows, expiry=args.expiry)
        self.flush_every = args.flush
        self.allow = args.allow
        self.store = open_fireflies(args.store, **store_options(args))
        self.store.prepare()
        self.sock = _socket(args.listen, args.port)
        port = self.sock.getsockname()[1]
        self.id = args.id or "%s:%d" % (socket.gethostname(), port)
        self.rejected = {}
        self.stop = False
        # A signal's handler only sets `stop`; the wakeup socket ends the select at once.
        self.wakeup, self.wakeup_w = socket.socketpair()
        self.wakeup.setblocking(False)
        self.wakeup_w.setblocking(False)
        self.last_flush = time.time()
        sys.stderr.write("jumbo-fireflies: listening on %s port %d\n" % (args.listen, port))
        sys.stderr.flush()

    def _datagram(self, data, sender):
        if not _allowed(self.allow, sender[0]):
            self.rejected["sender not allowed"] = self.rejected.get("sender not allowed", 0) + 1
            return
        try:
            ff = firefly.parse(data)
        except firefly.FireflyError as err:
            # Counted by the kind of fault (the message without its values), at most 50 kinds.
            kind = _VALUES.sub("", str(err))[:60]
            if kind in self.rejected or len(self.rejected) < 50:
                self.rejected[kind] = self.rejected.get(kind, 0) + 1
            return
        self.table.observe(ff, time.monotonic())

    def flush(self, final=False):
        now = time.time()
        self.table.expire(time.monotonic())
        cells = self.table.take()
        try:
            if cells:
                self.store.write(self.last_flush, now, self.id, cells)
            self.last_flush = now
        except StoreError as err:
            self.table.restore(cells)
            sys.stderr.write("jumbo-fireflies: %s (%d site pairs kept%s)\n"
                             % (message(err), len(cells), "" if final else " for the next flush"))
            if final:
                raise ReportError("%s: %d site pairs not stored" % (err, len(cells)), status=3)
        counts = dict(self.table.counts, flows=len(self.table.flows), rejected=sum(self.rejected.values()))
        sys.stderr.write("jumbo-fireflies: %s %s\n" % (
            "stopped;" if final else "flushed;", " ".join("%s=%d" % kv for kv in sorted(counts.items()))))
        if self.rejected:
            sys.stderr.write("jumbo-fireflies: rejected %s\n" % ", ".join(
                "%s=%d" % kv for kv in sorted(self.rejected.items())))
        sys.stderr.flush()

    def run(self):
        deadline = time.monotonic() + self.flush_every
        while not self.stop:
            left = deadline - time.monotonic()
            if left <= 0:
                self.flush()
                deadline = time.monotonic() + self.flush_every
                continue
            try:
                ready, _w, _x = select.select([self.sock, self.wakeup], [], [], left)
            except InterruptedError:
                continue
            for _n in range(1000 if self.sock in ready else 0):      # drain, bounded, then look at the clock
                try:
                    data, sender = self.sock.recvfrom(firefly.MAX_DATAGRAM + 1)
                except (BlockingIOError, InterruptedError):
                    break
                self._datagram(data, sender)
        self.flush(final=True)

    def close(self):
        signal.set_wakeup_fd(-1)
        for sock in (self.sock, self.wakeup, self.wakeup_w):
            sock.close()
        self.store.close()


def run(argv=None):
    args = parser().parse_args(argv)
    _check(args)
    try:
        collector = Collector(args)
    except StoreError as err:
        raise ReportError(str(err), status=3)

    def stop(_signum, _frame):
        collector.stop = True
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    signal.set_wakeup_fd(collector.wakeup_w.fileno())
    try:
        collector.run()
    finally:
        collector.close()


def main(argv=None):
    return exit_status("jumbo-fireflies", lambda: run(argv))


if __name__ == "__main__":
    sys.exit(main())
