"""A small HTTP(S) proxy in front of the test OpenSearch node, for the archive tests: it relays
every request, unless `intercept` answers it first (a proxy's body limit, a front end's
credentials, a refused privilege, a busy node). Subclasses say what they intercept."""

import http.client
import http.server
import json
import ssl
import sys
import threading
import time


def json_answer(status, payload):
    """An intercepted answer with a JSON body."""
    return status, json.dumps(payload).encode()


class RelayProxy(object):
    """Relays to `upstream` (http://HOST:PORT); over TLS when given a certificate."""

    def __init__(self, upstream, certfile=None, keyfile=None, listen=("127.0.0.1", 0)):
        self.upstream = upstream.split("://", 1)[1].rstrip("/")
        self.requests = 0
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _relay(self):
                proxy.requests += 1
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                answer = proxy.intercept(self.command, self.path, self.headers, length)
                status, data = answer or proxy.forward(self.command, self.path, self.headers, body)
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)

            do_GET = do_PUT = do_POST = do_HEAD = do_DELETE = _relay

        self.server = http.server.ThreadingHTTPServer(listen, Handler)
        self.server.daemon_threads = True
        self.scheme = "http"
        if certfile:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(certfile, keyfile)
            self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
            self.scheme = "https"
        self.url = "%s://127.0.0.1:%d" % (self.scheme, self.server.server_address[1])
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def intercept(self, method, path, headers, length):
        """(status, body bytes) to answer instead of relaying, or None to relay."""
        return None

    def forward(self, method, path, headers, body):
        conn = http.client.HTTPConnection(self.upstream, timeout=30)
        try:
            conn.request(method, path, body=body, headers={
                "Content-Type": headers.get("Content-Type", "application/json")})
            response = conn.getresponse()
            return response.status, response.read()
        finally:
            conn.close()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


class SlowRelay(RelayProxy):
    """Every request relayed `delay` seconds late: an overloaded OpenSearch (issue 32, row 1)."""

    def __init__(self, upstream, delay, **kwargs):
        RelayProxy.__init__(self, upstream, **kwargs)
        self.delay = delay

    def intercept(self, method, path, headers, length):
        time.sleep(self.delay)
        return None


if __name__ == "__main__":
    # python3 relay_proxy.py UPSTREAM DELAY PORT: a SlowRelay on 127.0.0.1:PORT until killed
    # (run inside a lab namespace by tests/integration/test_real_pscheduler_slow_archive.py).
    relay = SlowRelay(sys.argv[1], float(sys.argv[2]), listen=("127.0.0.1", int(sys.argv[3])))
    sys.stdout.write("relaying %s at %s\n" % (sys.argv[1], relay.url))
    sys.stdout.flush()
    relay.thread.join()
