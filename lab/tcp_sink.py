"""A TCP sink for the lab: reads every connection to its end, then closes it, and prints one
JSON line per connection (peer, bytes read). The receiving side of lab/flowd_standin.py's
transfers; ended by its PID (SIGTERM).

    python3 -m lab.tcp_sink ADDRESS PORT
"""

import json
import socket
import sys
import threading


def _drain(conn, peer, lock):
    total = 0
    with conn:
        while True:
            data = conn.recv(1 << 20)
            if not data:
                break
            total += len(data)
    with lock:
        sys.stdout.write(json.dumps({"peer": peer[0], "port": peer[1], "bytes": total}) + "\n")
        sys.stdout.flush()


def main(argv=None):
    address, port = (argv or sys.argv[1:])[:2]
    server = socket.socket(socket.AF_INET6 if ":" in address else socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind((address, int(port)))
    server.listen(16)
    sys.stdout.write("listening\n")
    sys.stdout.flush()
    lock = threading.Lock()
    while True:
        conn, peer = server.accept()
        threading.Thread(target=_drain, args=(conn, peer, lock), daemon=True).start()


if __name__ == "__main__":
    sys.exit(main())
