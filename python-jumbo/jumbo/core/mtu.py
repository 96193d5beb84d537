"""The MTU table: every packet-size constant of the suite, with where it comes from.

Sizes are IP packet sizes in bytes (the MTU counts the IP header, not the link header).
"""

# Smallest link MTU each family must carry: RFC 791 (IPv4, 68) and RFC 8200 (IPv6, 1280).
MIN_MTU_V4 = 68
MIN_MTU_V6 = 1280
MIN_MTU = {4: MIN_MTU_V4, 6: MIN_MTU_V6}

# Largest IP packet the IPv4/IPv6 length fields allow (IPv6 jumbograms excluded).
MAX_IP_PACKET = 65535

# Ethernet's standard payload, and the jumbo size this suite checks paths for (the
# default `target-mtu`; what "jumbo end to end" means).
STANDARD_MTU = 1500
JUMBO_MTU = 9000
DEFAULT_TARGET_MTU = JUMBO_MTU

# MTUs real paths plateau at, probed first by the searches: IPv6's minimum, Ethernet,
# FDDI / many WAN links (4470), 9000 less a 50-byte VXLAN encapsulation (8950), jumbo,
# and the common switch maximum (9216).
PLATEAUS = (1280, 1500, 4470, 8950, 9000, 9216)

# IP header without options, per family.
IP_HEADER = {4: 20, 6: 40}
TCP_HEADER = 20
# Header bytes below the TCP payload: IPv4 20 + TCP 20 = 40; IPv6 40 + TCP 20 = 60.
HEADERS = {version: size + TCP_HEADER for version, size in IP_HEADER.items()}
# TCP timestamps take 12 bytes of every segment, so the kernel reports an MSS 12 below the
# one asked for: 1500 -> 1460 asked, 1448 seen (IPv4), 1440 / 1428 (IPv6); 9000 -> 8960 / 8948.
TCP_TIMESTAMPS = 12
# Most option bytes a TCP segment can carry: an observed MSS may be this far below -M.
MSS_TOLERANCE = 40


def mss_for(mtu, ip_version):
    """The TCP MSS of a path MTU: 1500 -> 1460 (IPv4) or 1440 (IPv6)."""
    return int(mtu) - HEADERS[6 if ip_version == 6 else 4]


def is_jumbo(path_mtu, target, pmtud=None):
    """The `jumbo` verdict of a forward measurement, defined once: the path carries `target`
    (True), it does not (False), or the run could not decide (None: no path MTU, or PMTUD
    `unknown` because flows were left unconfirmed; undecided is never jumbo)."""
    if path_mtu is None:
        return None
    if path_mtu < (target or DEFAULT_TARGET_MTU):
        return False
    return None if pmtud == "unknown" else True


def receiver_capped(mss, mtu, observed_mss, pmtu):
    """A TCP leg asked for `mss` at `mtu` ran at `observed_mss`, below it beyond the option
    bytes, while its socket's path MTU `pmtu` was at least `mtu`: the size was refused by the
    receiver's advertised MSS (Linux advertises the MSS of the route it answers on, so a
    receiver whose way back is smaller caps it) or by a middlebox clamping MSS, not by the
    path. Unknown values never make a leg capped."""
    if None in (mss, mtu, observed_mss, pmtu):
        return False
    return observed_mss < mss - MSS_TOLERANCE and pmtu >= mtu
