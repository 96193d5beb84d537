"""One firefly datagram, read as hostile input: SciTags' flow marker in flowd-go's format.

A firefly is a UDP datagram holding one JSON object, bare or behind an RFC 5424 syslog header
(flowd-go's default: `<134>1 TIME HOST APP - firefly-json - {...}`). Its members, as flowd-go
writes them (scitags/flowd-go types/firefly.go, types/enrichment.go):

  version          1
  flow-lifecycle   state (start | ongoing | end), start-time, current-time, end-time
  flow-id          afi (ipv4 | ipv6), src-ip, dst-ip, protocol (tcp | udp), src-port, dst-port
  context          experiment-id, activity-id, application
  netlink / skOps  in `ongoing` messages only: the kernel's view of the socket; its `tcpInfo`
                   carries sndMss, pMtu and bytesSent (the counter of data bytes sent so far)
  usage            {sent, received}: in the SciTags schema, not written by flowd-go; some
                   applications put their byte counts in the `end` message

Everything is checked before it is believed: the size (MAX_DATAGRAM), the nesting depth
(MAX_DEPTH, checked before the JSON parser recurses), every type (a boolean is no number),
every range, the family of both addresses. A datagram that fails is a FireflyError naming
why; the collector counts it and goes on.
"""

import collections
import ipaddress
import json
import re

from ..core.errors import JumboError

MAX_DATAGRAM = 16384        # flowd-go's lean fireflies fit one 1500-byte frame; its full ones ~3 kB
MAX_DEPTH = 8               # firefly > netlink > tcpInfo is 3 deep
MAX_COUNTER = 10 ** 18      # bytes: no flow sends an exabyte; a bigger count is no measurement
MAX_MSS = 65535

STATES = ("start", "ongoing", "end")
FAMILIES = {"ipv4": 4, "ipv6": 6}

# RFC 5424: <PRI>VERSION SP TIMESTAMP SP HOSTNAME SP APP-NAME SP PROCID SP MSGID SP SD SP MSG,
# each header field a run of printable characters, or "-"; SD "-" or [..] elements. The
# timestamp may be empty: flowd-go writes its firefly's current-time there, and its start and
# end fireflies have none ("<134>1  host flowd-go - firefly-json - {...}").
_SYSLOG = re.compile(br"<(\d{1,3})>1 (\S{0,64}) (\S{1,255}) (\S{1,48}) (\S{1,128}) (\S{1,32}) "
                     br"(-|(?:\[[^\]]{0,2048}\])+) ?")

Firefly = collections.namedtuple("Firefly", (
    "state", "ip_version", "src", "dst", "src_port", "dst_port", "protocol",
    "snd_mss", "pmtu", "bytes_sent", "usage_sent"))


class FireflyError(JumboError, ValueError):
    """The datagram is not a firefly this collector can take (the message says why)."""


def depth_ok(text):
    """True when no object or array nests deeper than MAX_DEPTH (strings skipped)."""
    depth = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            depth += 1
            if depth > MAX_DEPTH:
                return False
        elif ch in "}]":
            depth -= 1
    return True


def _json_body(datagram):
    """The JSON text of a datagram: after a syslog header, or the whole of a bare one."""
    if len(datagram) > MAX_DATAGRAM:
        raise FireflyError("datagram of %d bytes (at most %d)" % (len(datagram), MAX_DATAGRAM))
    body = datagram
    if body[:1] == b"<":
        match = _SYSLOG.match(body)
        if match is None or int(match.group(1)) > 191:
            raise FireflyError("not an RFC 5424 syslog message")
        body = body[match.end():]
    if body[:3] == b"\xef\xbb\xbf":         # RFC 5424's BOM before a UTF-8 MSG
        body = body[3:]
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise FireflyError("not UTF-8")
    if not text.lstrip().startswith("{"):
        raise FireflyError("no JSON object")
    if not depth_ok(text):
        raise FireflyError("JSON nested deeper than %d" % MAX_DEPTH)
    return text


def _reject_constant(name):
    raise FireflyError("%s is not a JSON number" % name)


def _member(obj, key, kind, where, required=True):
    if not isinstance(obj, dict):
        raise FireflyError("%s is not an object" % where)
    value = obj.get(key)
    if value is None:
        if required:
            raise FireflyError("%s.%s missing" % (where, key))
        return None
    if kind is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise FireflyError("%s.%s is not an integer" % (where, key))
    elif not isinstance(value, kind):
        raise FireflyError("%s.%s is not %s" % (where, key, "an object" if kind is dict else "a string"))
    return value


def _int(obj, key, where, high, required=True):
    value = _member(obj, key, int, where, required)
    if value is not None and not 0 <= value <= high:
        raise FireflyError("%s.%s = %d is out of range (0..%d)" % (where, key, value, high))
    return value


def _address(flow_id, key, version):
    text = _member(flow_id, key, str, "flow-id")
    try:
        addr = ipaddress.ip_address(text[:64])
    except ValueError:
        raise FireflyError("flow-id.%s %r is not an IP address" % (key, text[:64]))
    if addr.version != version:
        raise FireflyError("flow-id.%s %s is not of afi ipv%d" % (key, addr, version))
    if addr.is_unspecified or addr.is_multicast:
        raise FireflyError("flow-id.%s %s is no host's address" % (key, addr))
    return str(addr)


def _tcp_info(message):
    """(sndMss, pMtu, bytesSent) of the kernel's view in an ongoing message, None where absent.
    netlink is read first; skOps (flowd-go's eBPF enricher) when there is no netlink."""
    for key in ("netlink", "skOps"):
        info = _member(message, key, dict, "firefly", required=False)
        if info is None:
            continue
        tcp = _member(info, "tcpInfo", dict, key, required=False)
        if tcp is None:
            continue
        where = key + ".tcpInfo"
        return (_int(tcp, "sndMss", where, MAX_MSS, required=False),
                _int(tcp, "pMtu", where, MAX_MSS, required=False),
                _int(tcp, "bytesSent", where, MAX_COUNTER, required=False))
    return None, None, None


def parse(datagram):
    """The Firefly in a datagram (bytes), or FireflyError."""
    text = _json_body(datagram)
    try:
        message = json.loads(text, parse_constant=_reject_constant)
    except (ValueError, RecursionError) as err:
        raise FireflyError("invalid JSON: %s" % str(err)[:80])
    version = _int(message, "version", "firefly", 1 << 30)
    if version != 1:
        raise FireflyError("firefly version %d (this collector reads version 1)" % version)
    life = _member(message, "flow-lifecycle", dict, "firefly")
    state = _member(life, "state", str, "flow-lifecycle")
    if state not in STATES:
        raise FireflyError("flow-lifecycle.state %r is not one of %s" % (state[:20], ", ".join(STATES)))
    flow_id = _member(message, "flow-id", dict, "firefly")
    afi = _member(flow_id, "afi", str, "flow-id")
    if afi.lower() not in FAMILIES:
        raise FireflyError("flow-id.afi %r is not ipv4 or ipv6" % afi[:20])
    family = FAMILIES[afi.lower()]
    protocol = _member(flow_id, "protocol", str, "flow-id").lower()
    if protocol not in ("tcp", "udp"):
        raise FireflyError("flow-id.protocol %r is not tcp or udp" % protocol[:20])
    src = _address(flow_id, "src-ip", family)
    dst = _address(flow_id, "dst-ip", family)
    src_port = _int(flow_id, "src-port", "flow-id", 65535)
    dst_port = _int(flow_id, "dst-port", "flow-id", 65535)
    snd_mss, pmtu, bytes_sent = _tcp_info(message)
    usage = _member(message, "usage", dict, "firefly", required=False)
    usage_sent = _int(usage, "sent", "usage", MAX_COUNTER, required=False) if usage is not None else None
    return Firefly(state, family, src, dst, src_port, dst_port, protocol,
                   snd_mss, pmtu, bytes_sent, usage_sent)
