"""The reflector's wire format, shared by both ends: the dest's reflector (jumbo.tool.reflector)
and the source's clients (jumbo.probe.reflected for forward probes, jumbo.tool.reverse for the
reverse search).

Messages (UDP payload), all starting with a 40-byte header:
    magic "JMBO" | version u8 | type u8 | flags u8 | pad u8 | size u16 | body-length u16 |
    seq u32 | nonce 8 bytes | mac 16 bytes
mac = HMAC-SHA256(token, direction byte + first 24 header bytes + body), first 16 bytes; the
direction byte ("Q" request, "A" answer) stops a reply being replayed as a request.
Types: HELLO 1 (reachability, RTT), PROBE 2 (size = reply size wanted), STATUS 3 (p0 is done;
the answer carries p1's report as JSON), answers have the type | 0x80, LIMIT 0x84 (EMSGSIZE).
Sizes are IP packet sizes (IP header + UDP header + payload).

Standard library only; Python 3.6.
"""

import hashlib
import hmac
import os
import socket
import struct


PROTOCOL = 1
MAGIC = b"JMBO"
HEADER = struct.Struct("!4sBBBBHHI8s")  # 24 bytes, then the 16-byte mac
MAC_LEN = 16
HEADER_LEN = HEADER.size + MAC_LEN  # 40

HELLO, PROBE, STATUS = 1, 2, 3
ANSWER = 0x80
LIMIT = 0x84

UDP_HEADER = 8

# Linux socket options both ends set (beyond the probe transports' own).
IP_PMTUDISC_DONT = 0
IPV6_MTU, IPV6_V6ONLY = 24, 26
IPV6_PMTUDISC_DONT = 0
IP_PKTINFO, IPV6_RECVPKTINFO, IPV6_PKTINFO = 8, 49, 50


def make_mac(key, direction, head, body):
    return hmac.new(key, direction + head + body, hashlib.sha256).digest()[:MAC_LEN]


def encode(key, direction, kind, seq, nonce, size=0, body=b"", total=0):
    """A message; padded with zeros to `total` payload bytes."""
    head = HEADER.pack(MAGIC, PROTOCOL, kind, 0, 0, size, len(body), seq, nonce)
    message = head + make_mac(key, direction, head, body) + body
    if total > len(message):
        message += b"\0" * (total - len(message))
    return message


def decode(key, direction, data):
    """(kind, seq, nonce, size, body) of a well-formed, authentic message, else None."""
    if len(data) < HEADER_LEN:
        return None
    magic, version, kind, _flags, _pad, size, blen, seq, nonce = HEADER.unpack(data[:HEADER.size])
    if magic != MAGIC or version != PROTOCOL or HEADER_LEN + blen > len(data):
        return None
    body = data[HEADER_LEN:HEADER_LEN + blen]
    mac = data[HEADER.size:HEADER_LEN]
    if not hmac.compare_digest(mac, make_mac(key, direction, data[:HEADER.size], body)):
        return None
    return kind, seq, nonce, size, body


def quoted_probe(data, nonce):
    """The seq of our request quoted at the start of an ICMP error's payload (routers quote
    at least the header), when it carries this flow's `nonce`; else None."""
    if len(data) >= HEADER.size:
        fields = HEADER.unpack(data[:HEADER.size])
        if fields[0] == MAGIC and fields[8] == nonce:
            return fields[7]
    return None


def token_key(token):
    """The HMAC key of a hex token (participant data `_token`)."""
    if not isinstance(token, str) or len(token) < 16:
        raise ValueError("the reflector token must be a hex string of at least 16 digits")
    try:
        return bytes.fromhex(token)
    except ValueError:
        raise ValueError("the reflector token is not hexadecimal")


def new_token():
    """A one-time run token: 128 random bits, hex."""
    return os.urandom(16).hex()


def big_buffers(sock, size=4 * 1024 * 1024):
    """Ask for large socket buffers (the kernel caps them at rmem_max/wmem_max): a round of
    probes arrives as a burst."""
    for option in (socket.SO_RCVBUF, socket.SO_SNDBUF):
        try:
            sock.setsockopt(socket.SOL_SOCKET, option, size)
        except OSError:
            pass


def datagrams(sock, limit):
    """The datagrams waiting on a non-blocking socket, at most `limit`. A pending ICMP error
    that surfaces instead (IP_RECVERR) is passed over: the error queue holds it."""
    for _ in range(limit):
        try:
            yield sock.recv(65535, socket.MSG_DONTWAIT)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            continue
