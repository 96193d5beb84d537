"""The dest's ICMP error budget as its kernel keeps it, for single-ended bench runs.

A single-ended UDP probe that reaches the dest is answered by an ICMP port unreachable, and
Linux rate-limits those per peer: a token bucket (net/ipv4/inetpeer.c inet_peer_xrlim_allow)
of XRLIM_BURST_FACTOR = 6 answers, refilled one answer per `timeout`, where `timeout` is
net.ipv4.icmp_ratelimit (ms) for IPv4 and net.ipv6.icmp.ratelimit for IPv6. The burst factor
is a kernel constant, not a sysctl; the rate is read from the dest's namespace, not assumed.
Older kernels shortened the IPv6 timeout by the prefix length of the route back to the peer
((128 - plen) >> 5 halvings: a quarter for a /64); measured on this lab's kernel (6.18), a
/64 peer gets 1000 / icmp.ratelimit answers a second after the burst (ratelimit 100 ms:
9.5-9.6 a second after 6, i.e. no such shortening), which is the rate used here.
The global icmp_msgs_per_sec / icmp_msgs_burst limit (1000/s and 50 by default) is read
and shown; it never binds a single prober.

Budget(lab, "dst", "src", version) counts the answers the dest really sends to the source
(nftables counter on its output hook: destination-unreachable of that family; echo replies
are not rate-limited and not counted) and turns each run into its bound: the answers it
needed beyond the tokens available at its start, at the kernel's rate,
max(0, answers - tokens) / rate seconds, where the tokens follow from the previous runs back
to back (a fresh bucket holds 6; each run leaves min(6, max(0, tokens + its time x rate -
its answers)), refilled at the rate until the next run starts). Answers lost on the way back
count: they spent tokens all the same.
"""

import json
import time

BURST = 6  # XRLIM_BURST_FACTOR (include/net/inetpeer.h): not a sysctl


def _sysctl(lab, node, key):
    done = lab.run(node, ["sysctl", "-n", key], check=False)
    try:
        return int(done.stdout.split()[0])
    except (IndexError, ValueError):
        return None


class Budget(object):
    def __init__(self, lab, node, peer, version):
        self.lab, self.node, self.version = lab, node, version
        self.peer_ip = lab.address(peer, version)
        if version == 4:
            self.ratelimit_ms = _sysctl(lab, node, "net.ipv4.icmp_ratelimit")
        else:
            self.ratelimit_ms = _sysctl(lab, node, "net.ipv6.icmp.ratelimit")
        self.global_rate = _sysctl(lab, node, "net.ipv4.icmp_msgs_per_sec")
        self.global_burst = _sysctl(lab, node, "net.ipv4.icmp_msgs_burst")
        # ratelimit 0 disables the limit: every answer is free.
        self.rate = 1000.0 / self.ratelimit_ms if self.ratelimit_ms else None
        self.tokens = float(BURST)
        self.last = None
        family = "ip" if version == 4 else "ip6"
        kind = "icmp" if version == 4 else "icmpv6"
        self.table = "budget%d" % version
        rules = ["add table inet %s" % self.table,
                 "add chain inet %s out { type filter hook output priority 0; }" % self.table,
                 "add rule inet %s out %s daddr %s %s type destination-unreachable counter"
                 % (self.table, family, self.peer_ip, kind)]
        lab.run(node, ["nft", "-f", "-"], input_text="\n".join(rules) + "\n")

    def describe(self):
        if self.rate is None:
            return "dest's ICMP budget IPv%d: not rate-limited" % self.version
        how = ("net.ipv4.icmp_ratelimit" if self.version == 4 else "net.ipv6.icmp.ratelimit") \
            + " %d ms" % self.ratelimit_ms
        return "dest's ICMP budget IPv%d: burst %d, %.2f answers/s (%s; global %s/s burst %s)" % (
            self.version, BURST, self.rate, how, self.global_rate, self.global_burst)

    def answers(self):
        listing = self.lab.run(self.node, ["nft", "-j", "list", "table", "inet", self.table])
        for item in json.loads(listing.stdout).get("nftables", []):
            for expr in (item.get("rule") or {}).get("expr", []):
                if "counter" in expr:
                    return expr["counter"]["packets"]
        return 0

    def measure(self, run):
        """run() -> value; returns (value, answers, tokens at start, bound seconds or None)."""
        before = self.answers()
        start = time.monotonic()
        if self.last is not None and self.rate:
            self.tokens = min(float(BURST), self.tokens + (start - self.last) * self.rate)
        tokens = self.tokens
        value = run()
        end = time.monotonic()
        answers = self.answers() - before
        if not self.rate:
            self.last = end
            return value, answers, tokens, 0.0
        bound = max(0.0, answers - tokens) / self.rate
        self.tokens = min(float(BURST), max(0.0, tokens + (end - start) * self.rate - answers))
        self.last = time.monotonic()
        return value, answers, tokens, bound

    def close(self):
        self.lab.run(self.node, ["nft", "delete", "table", "inet", self.table], check=False)
