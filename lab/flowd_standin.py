"""A STAND-IN for SciTags' flowd-go (its firefly backend with the netlink enricher in "lean"
mode), for the lab and the demo: real TCP transfers from this process, and for each the
fireflies flowd-go would send about it, made from the kernel's own TCP_INFO of the socket.

Why a stand-in: flowd-go is a Go daemon (eBPF and netlink) not packaged for this machine. What
it sends, read from its source (scitags/flowd-go):
- types/firefly.go: the Firefly struct's JSON members (FIREFLY below), Go's compact JSON in
  struct order; behind an RFC 5424 header `<134>1 CURRENT-TIME HOST APP - firefly-json - `
  (local0.info) when prependSyslog is on (the default); CURRENT-TIME is empty for start and
  end (only ongoing fireflies have a current-time), so the header then has two spaces.
  Times as "2006-01-02T15:04:05.999999-07:00" (trailing zeros of the fraction dropped).
- backends/fireflyb: `start` and `end` carry no TCP view; while the flow lives, every
  enrichment period an `ongoing` firefly carries the enricher's FlowInfo under `netlink`.
- types/enrichment.go, marshalled in "lean" mode (fireflyb's default enrichmentMode) with
  fatih/structs: the members whose `lean` tag is not "-" (LEAN_TCP_INFO), under their lean
  names, a field without a lean tag under its Go name (`Retransmits`); map keys sorted.
The field lists here are checked against that source by tests/test_lab_flowd_standin.py.

Beyond flowd-go: a flow marked `usage` puts the SciTags schema's `usage: {sent}` (the bytes
it wrote) in its `end`, as an application that sends its own fireflies does (flowd-go never
writes it).

    python3 -m lab.flowd_standin --collector HOST:PORT --period S [--no-syslog]
        --flow DEST,PORT,BYTES,SECONDS[,usage] ...
prints one JSON line per flow: dest, family, bytes written, the final TCP_INFO view.
"""

import argparse
import datetime
import json
import socket
import struct
import sys
import threading
import time

# types/firefly.go, Firefly's members in struct order (omitempty ones last in their object).
FIREFLY = {
    "version": None,
    "flow-lifecycle": ("state", "current-time", "start-time", "end-time"),
    "flow-id": ("afi", "src-ip", "dst-ip", "protocol", "src-port", "dst-port"),
    "context": ("experiment-id", "activity-id", "application"),
    "netlink": ("tcpInfo", "cong"),
}
# types/enrichment.go TCPInfo: the lean members, and the tcp_info field each one is.
LEAN_TCP_INFO = {
    "Retransmits": "retransmits", "sndMss": "snd_mss", "pMtu": "pmtu", "rtt": "rtt",
    "rttVar": "rttvar", "sndSsThresh": "snd_ssthresh", "sndCwnd": "snd_cwnd",
    "advMss": "advmss", "minRtt": "min_rtt", "deliveryRate": "delivery_rate",
    "bytesSent": "bytes_sent",
}
LEAN_CONG = ("algorithm",)
APP_NAME = "flowd-go"
SYSLOG_PRIORITY = (16 << 3) | 6         # local0.info

# struct tcp_info (include/uapi/linux/tcp.h) up to tcpi_snd_wnd (Linux 5.4+): 232 bytes.
_TCP_INFO = struct.Struct("=8B24I4Q6I4Q2I2Q4I")
_NAMES = (["state", "ca_state", "retransmits", "probes", "backoff", "options", "wscale", "flags"]
          + ["rto", "ato", "snd_mss", "rcv_mss", "unacked", "sacked", "lost", "retrans", "fackets",
             "last_data_sent", "last_ack_sent", "last_data_recv", "last_ack_recv", "pmtu",
             "rcv_ssthresh", "rtt", "rttvar", "snd_ssthresh", "snd_cwnd", "advmss", "reordering",
             "rcv_rtt", "rcv_space", "total_retrans"]
          + ["pacing_rate", "max_pacing_rate", "bytes_acked", "bytes_received"]
          + ["segs_out", "segs_in", "notsent_bytes", "min_rtt", "data_segs_in", "data_segs_out"]
          + ["delivery_rate", "busy_time", "rwnd_limited", "sndbuf_limited"]
          + ["delivered", "delivered_ce", "bytes_sent", "bytes_retrans"]
          + ["dsack_dups", "reord_seen", "rcv_ooopack", "snd_wnd"])


def tcp_info(sock):
    """The kernel's tcp_info of a socket, as a dict of its fields."""
    raw = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, _TCP_INFO.size)
    if len(raw) < _TCP_INFO.size:
        raise RuntimeError("tcp_info of %d bytes: the kernel is older than Linux 5.4" % len(raw))
    return dict(zip(_NAMES, _TCP_INFO.unpack(raw)))


def lean_flow_info(sock):
    """flowd-go's FlowInfo in lean mode for this socket (the `netlink` member)."""
    info = tcp_info(sock)
    cong = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16).split(b"\0")[0]
    return {"cong": {"algorithm": cong.decode("ascii")},
            "tcpInfo": {name: info[field] for name, field in sorted(LEAN_TCP_INFO.items())}}


def go_time(epoch):
    """Go's "2006-01-02T15:04:05.999999-07:00" in UTC."""
    text = datetime.datetime.utcfromtimestamp(epoch).strftime("%Y-%m-%dT%H:%M:%S.%f")
    return text.rstrip("0").rstrip(".") + "+00:00"


def firefly(state, local, peer, start, end=None, netlink=None, usage=None):
    """One firefly (dict, members in flowd-go's order) about the TCP flow `local` -> `peer`."""
    family = "ipv6" if ":" in local[0] else "ipv4"
    life = {"state": state}
    if state == "ongoing":
        life["current-time"] = go_time(time.time())
    life["start-time"] = go_time(start)
    if end is not None:
        life["end-time"] = go_time(end)
    ff = {"version": 1, "flow-lifecycle": life,
          "flow-id": {"afi": family, "src-ip": local[0], "dst-ip": peer[0], "protocol": "tcp",
                      "src-port": local[1], "dst-port": peer[1]},
          "context": {"experiment-id": 0, "activity-id": 0, "application": APP_NAME}}
    if netlink is not None:
        ff["netlink"] = netlink
    if usage is not None:
        ff["usage"] = {"sent": usage}
    return ff


def payload(ff, syslog=True):
    body = json.dumps(ff, separators=(",", ":"))
    if not syslog:
        return body.encode("utf-8")
    header = "<%d>1 %s %s %s - firefly-json - " % (
        SYSLOG_PRIORITY, ff["flow-lifecycle"].get("current-time", ""), socket.gethostname(),
        APP_NAME)
    return (header + body).encode("utf-8")


class Flow(object):
    """One TCP transfer and its fireflies: start; ongoing every `period` while the socket is
    open; end. `usage` puts the bytes sent in the end firefly."""

    def __init__(self, emit, period, dest, port, nbytes, seconds, usage=False):
        self.emit, self.period = emit, period
        self.dest, self.port, self.nbytes, self.seconds, self.usage = dest, port, nbytes, seconds, usage
        self.written = 0
        self.final = None
        self.closed = threading.Event()
        self.last_tick = threading.Event()
        self.ticked = threading.Event()

    def _ticks(self, sock, peer, start):
        while not self.closed.wait(self.period):
            self.emit(firefly("ongoing", sock.getsockname(), peer, start, netlink=lean_flow_info(sock)))
            if self.last_tick.is_set():
                break
        self.ticked.set()

    def run(self):
        family = socket.AF_INET6 if ":" in self.dest else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.settimeout(30)
        sock.connect((self.dest, self.port))
        peer, local = sock.getpeername(), sock.getsockname()
        start = time.time()
        self.emit(firefly("start", local, peer, start))
        ticker = threading.Thread(target=self._ticks, args=(sock, peer, start), daemon=True)
        ticker.start()
        chunk = b"\0" * 65536
        began = time.monotonic()
        while self.written < self.nbytes:
            n = min(len(chunk), self.nbytes - self.written)
            sock.sendall(chunk[:n])
            self.written += n
            # Paced over `seconds`: the flow outlives several enrichment periods.
            ahead = self.written / float(self.nbytes) * self.seconds - (time.monotonic() - began)
            if ahead > 0:
                time.sleep(min(ahead, 0.2))
        sock.shutdown(socket.SHUT_WR)
        while sock.recv(65536):        # the sink closes once it has read everything
            pass
        self.final = tcp_info(sock)
        if self.seconds > 0:
            # flowd-go sees the socket until it is gone: one more period reports the final count.
            self.last_tick.set()
            self.ticked.wait(self.period * 3 + 5)
        self.closed.set()
        sock.close()
        ticker.join(self.period + 5)
        self.emit(firefly("end", local, peer, start, end=time.time(),
                          usage=self.written if self.usage else None))
        return {"dest": self.dest, "port": self.port, "family": 6 if family == socket.AF_INET6 else 4,
                "written": self.written, "bytes_sent": self.final["bytes_sent"],
                "bytes_retrans": self.final["bytes_retrans"], "snd_mss": self.final["snd_mss"],
                "pmtu": self.final["pmtu"], "usage": self.usage}


def _flow_arg(text):
    parts = text.split(",")
    if len(parts) not in (4, 5) or (len(parts) == 5 and parts[4] != "usage"):
        raise argparse.ArgumentTypeError("expected DEST,PORT,BYTES,SECONDS[,usage]")
    return parts[0], int(parts[1]), int(parts[2]), float(parts[3]), len(parts) == 5


def main(argv=None):
    p = argparse.ArgumentParser(prog="flowd_standin", description=__doc__.split("\n\n")[0])
    p.add_argument("--collector", required=True, help="HOST:PORT (a v6 host in [brackets])")
    p.add_argument("--period", type=float, default=1.0)
    p.add_argument("--no-syslog", dest="syslog", action="store_false")
    p.add_argument("--flow", type=_flow_arg, action="append", required=True)
    args = p.parse_args(argv)
    host, _, port = args.collector.rpartition(":")
    host = host.strip("[]")
    out = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_DGRAM)
    lock = threading.Lock()

    def emit(ff):
        with lock:
            out.sendto(payload(ff, args.syslog), (host, int(port)))
    flows = [Flow(emit, args.period, *spec) for spec in args.flow]
    results = [None] * len(flows)

    def run(i):
        results[i] = flows[i].run()
    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(flows))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(600)
    for r in results:
        sys.stdout.write(json.dumps(r) + "\n")
    out.close()
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
