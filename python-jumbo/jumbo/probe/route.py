"""The egress interface towards a dest and its MTU, without privileges: a netlink route query,
then SIOCGIFMTU (or /sys). The route's cached PMTU is deliberately not used: it is what earlier
PTBs taught this host, not the interface."""

import fcntl
import socket
import struct

from .transport import DEFAULT_PORT, SOL_IP, SOL_IPV6, socket_problem

RTM_NEWROUTE, RTM_GETROUTE = 24, 26
NLM_F_REQUEST = 1
NLMSG_ERROR = 2
RTA_DST, RTA_SRC, RTA_OIF = 1, 2, 4
SIOCGIFMTU = 0x8921


def _rtattr(kind, payload):
    length = 4 + len(payload)
    return struct.pack("=HH", length, kind) + payload + b"\0" * ((4 - length % 4) % 4)


def egress_interface(dest_ip, version, source=None):
    """Name of the interface the kernel routes `dest_ip` through, or None."""
    family = socket.AF_INET if version == 4 else socket.AF_INET6
    bits = 32 if version == 4 else 128
    body = struct.pack("=BBBBBBBBI", family, bits, bits if source else 0, 0, 0, 0, 0, 0, 0)
    body += _rtattr(RTA_DST, socket.inet_pton(family, dest_ip))
    if source:
        body += _rtattr(RTA_SRC, socket.inet_pton(family, source))
    message = struct.pack("=IHHII", 16 + len(body), RTM_GETROUTE, NLM_F_REQUEST, 1, 0) + body
    try:
        sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)
    except (OSError, AttributeError):
        return None
    try:
        sock.settimeout(1.0)
        sock.send(message)
        reply = sock.recv(65536)
    except OSError:
        return None
    finally:
        sock.close()
    if len(reply) < 16:
        return None
    _length, kind = struct.unpack("=IH", reply[:6])
    if kind != RTM_NEWROUTE:
        return None
    offset = 16 + 12
    while offset + 4 <= len(reply):
        length, attr = struct.unpack("=HH", reply[offset:offset + 4])
        if length < 4:
            break
        if attr == RTA_OIF:
            index = struct.unpack("=I", reply[offset + 4:offset + 8])[0]
            try:
                return socket.if_indextoname(index)
            except OSError:
                return None
        offset += (length + 3) & ~3
    return None


def interface_mtu(name):
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        request = struct.pack("16si20x", name.encode()[:15], 0)
        answer = fcntl.ioctl(sock.fileno(), SIOCGIFMTU, request)
        return struct.unpack("16si20x", answer)[1]
    except OSError:
        try:
            with open("/sys/class/net/%s/mtu" % name) as handle:
                return int(handle.read().strip())
        except (OSError, ValueError):
            return None
    finally:
        sock.close()


def local_mtu(dest_ip, version, source=None):
    """(interface, MTU) of the egress interface towards dest_ip; the route's cached PMTU is
    deliberately not used (it is what earlier PTBs taught this host, not the interface)."""
    name = egress_interface(dest_ip, version, source)
    if name:
        mtu = interface_mtu(name)
        if mtu:
            return name, mtu
    # Fallback: the connected socket's IP_MTU (may reflect a cached path MTU).
    family = socket.AF_INET if version == 4 else socket.AF_INET6
    sock = socket.socket(family, socket.SOCK_DGRAM)
    try:
        if source:
            sock.bind((source, 0))
        sock.connect((dest_ip, DEFAULT_PORT))
        option = (SOL_IP, 14) if version == 4 else (SOL_IPV6, 24)
        return None, sock.getsockopt(option[0], option[1])
    except OSError as err:
        raise socket_problem(err, dest_ip, version, source)
    finally:
        sock.close()
