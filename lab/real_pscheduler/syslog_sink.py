#!/usr/bin/python3
"""A /dev/log for a host without a syslog daemon: pScheduler's daemons log only to syslog.

    syslog_sink.py FILE     append every datagram to FILE; remove /dev/log on SIGTERM/SIGINT
"""
import os
import signal
import socket
import sys
import time

DEVLOG = "/dev/log"


def main(path):
    if os.path.exists(DEVLOG):
        sys.exit("syslog_sink.py: %s already exists; not replacing it" % DEVLOG)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(DEVLOG)
    os.chmod(DEVLOG, 0o666)

    def stop(*_args):
        os.unlink(DEVLOG)
        sys.exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    with open(path, "a", buffering=1) as out:
        while True:
            line = sock.recv(65536).decode("utf-8", "replace").rstrip("\n\x00")
            out.write("%s %s\n" % (time.strftime("%H:%M:%S"), line))


if __name__ == "__main__":
    main(sys.argv[1])
