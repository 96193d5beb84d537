"""Name resolution, once for the suite: one family preference, one wording of its errors.

When the spec names no ip-version, IPv4 is preferred when the name has both kinds of
address (the legs, the probes and the reflector must all take the same path, so every
part resolves through here).
"""

import socket

from .errors import JumboError

FAMILIES = {4: socket.AF_INET, 6: socket.AF_INET6}
# Tried in this order when no version is asked for.
PREFERENCE = (4, 6)


class ResolveError(JumboError, ValueError):
    pass


def resolve(host, version=None):
    """(address, ip version) of `host` (a name or an IP literal); ResolveError if none."""
    family = FAMILIES.get(version, socket.AF_UNSPEC)
    try:
        infos = socket.getaddrinfo(host, None, family, socket.SOCK_DGRAM)
    except socket.gaierror as err:
        if version and err.errno in (socket.EAI_NONAME, getattr(socket, "EAI_ADDRFAMILY", -9),
                                     getattr(socket, "EAI_NODATA", -5)):
            try:
                socket.getaddrinfo(host, None, socket.AF_UNSPEC, socket.SOCK_DGRAM)
            except socket.gaierror:
                pass
            else:
                raise ResolveError("%s has no IPv%d address" % (host, version))
        raise ResolveError("cannot resolve %s: %s" % (host, err.strerror or err))
    for want in PREFERENCE:
        for info in infos:
            if info[0] == FAMILIES[want]:
                return info[4][0], want
    raise ResolveError("no IPv%s address for %s" % (version or "4/6", host))


def source_address(dest_ip, version, source=None):
    """The local address the kernel sends from to `dest_ip` (`source` when given), or None.
    A connected UDP socket: no packet is sent. The run's result names it (`source-ip`), so a
    run without `source` in its spec still says which address, in its family, it measured
    from (the lead's name may be of the other family)."""
    if source:
        return source
    family = socket.AF_INET6 if version == 6 else socket.AF_INET
    try:
        sock = socket.socket(family, socket.SOCK_DGRAM)
    except OSError:
        return None
    try:
        sock.connect((dest_ip, 9))
        return sock.getsockname()[0].split("%", 1)[0]
    except (OSError, ValueError, IndexError):
        return None
    finally:
        sock.close()
