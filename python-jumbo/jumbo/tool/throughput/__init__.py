"""The paired 1500/9000 throughput phase: what jumbo frames buy on this path, now.

Participant 1 (the dest) runs one `iperf3 -s` for exactly this run's legs (`serve`);
participant 0 (the source) runs the clients (`run_legs`), alternating the TCP MSS of a
standard 1500-byte path and of the jumbo path, in ABBA order by default (1500, 9000,
9000, 1500 per round) so that a slow drift of the path or of the hosts cancels out.

Everything here runs on the nodes: Python 3.6, standard library only.

How each leg proves its size
----------------------------
`iperf3 -M MSS` clamps the TCP MSS (MTU - 40 for IPv4, MTU - 60 for IPv6). The number
iperf3 prints as `start.tcp_mss` only echoes that request, so it proves nothing. The
kernel's own sending MSS (`tcpi_snd_mss`) is not printed either, but the congestion
window iperf3 prints per interval (`snd_cwnd`) is `tcpi_snd_cwnd * tcpi_snd_mss` bytes:
the greatest common divisor of those samples (taken on the sending side: the client
forward, the server's output in reverse) is the MSS the kernel really used. It is
reported as `observed-mss`. Linux subtracts the TCP options it puts on every segment
(timestamps: 12 bytes, so MSS 1460 shows as 1448 and 8960 as 8948); a leg is accepted
when `MSS - 40 <= observed-mss <= MSS` (40 bytes is the most TCP options can take) and
rejected otherwise. When the window samples are too few or all equal, the GCD may be a
multiple of the MSS; the largest divisor not above the MSS is then taken (noted in
`mss-note`). The kernel's path MTU for the socket (`tcpi_pmtu`, per interval in iperf3 >=
3.11) is reported as `pmtu` (the smallest seen); a leg whose socket learnt a path MTU
below its own MTU did not run at its size and is rejected too.

Never hang
----------
Every client has `--connect-timeout`, a test length `-t`, and a hard timeout (`-t` +
`-O` + a margin) after which it is killed by its PID; the whole phase has a deadline.
The server stops after the leg marked last (iperf3 `--extra-data`), at the deadline,
or when it exits, whichever comes first, and is killed by its PID.

Modules, by phase: plan (settings, legs, time budget), iperf (the process: path, port,
spawn, kill, JSON), server (p1), legs (p0's clients), proof (one leg's JSON read), summary
(gain, noise, Mathis, verdict); `python -m jumbo.tool.throughput` (__main__) runs one side
by hand. This package's names are the API the tool uses.
"""

from .iperf import available, choose_port, iperf3_path, port_free
from .legs import client_argv, run_client, run_legs
from .plan import (BETWEEN_LEGS_RETRY, CONNECT_RETRY, CONNECT_TIMEOUT, EXTRA_TAG,
                   LEG_MARGIN, PORT_RANGE, duration,
                   jumbo_leg_mtu, leg_count, leg_timeout, plan, settings)
from .proof import blank_run, failed_run, observed_mss, run_from_json
from .server import is_last, refused, serve
from .summary import MATHIS_C, STALL_FRACTION, gain_and_noise, mathis, stats, summarize

# The package's one public face (the tool and the tests use these names).
__all__ = ["available", "choose_port", "iperf3_path", "port_free", "client_argv", "run_client",
           "run_legs", "BETWEEN_LEGS_RETRY", "CONNECT_RETRY", "CONNECT_TIMEOUT", "EXTRA_TAG",
           "LEG_MARGIN", "PORT_RANGE", "duration",
           "jumbo_leg_mtu", "leg_count", "leg_timeout", "plan", "settings", "blank_run",
           "failed_run", "observed_mss", "run_from_json", "is_last", "refused", "serve",
           "MATHIS_C", "STALL_FRACTION", "gain_and_noise", "mathis", "stats", "summarize"]
