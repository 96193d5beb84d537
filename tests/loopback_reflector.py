"""A real reflector (jumbo.tool.reflector) serving over loopback in a thread, for the tests of
the reflector and of its clients: real sockets, no root, no lab."""

import contextlib
import socket
import threading
import time

from jumbo.tool import reflector


def free_udp_port():
    """A UDP port free on 127.0.0.1 a moment ago (the kernel's choice, released)."""
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    return port


@contextlib.contextmanager
def serving(token, seconds=10, port=None, **options):
    """(server, port, thread): a Reflector for `token` on `port` (a free one by default),
    IPv4, serving for at most `seconds`; ended, joined and closed on the way out, pass or
    fail. `options` go to Reflector (addresses, source, secret)."""
    port = port or free_udp_port()
    server = reflector.Reflector([port], token, (4,), **options).open()
    thread = threading.Thread(target=server.serve, args=(time.monotonic() + seconds,))
    thread.start()
    try:
        yield server, port, thread
    finally:
        server.done.set()
        thread.join(seconds + 2)
        server.close()
