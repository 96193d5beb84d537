"""A real HTTP server that answers as no OpenSearch does, for the archive's answer bounds
(issue 32, row 5): `answer(method, path)` gives (status, headers, body chunks); the chunks
are written as they come (a generator streams a huge body without holding it), and a
`delay` between chunks trickles it."""

import http.server
import threading
import time


class HostileServer(object):
    def __init__(self, answer, delay=0.0):
        self.requests = []
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _answer(self):
                length = int(self.headers.get("Content-Length") or 0)
                if length:
                    self.rfile.read(length)
                server.requests.append((self.command, self.path))
                status, headers, chunks = answer(self.command, self.path)
                self.send_response(status)
                for name, value in headers:
                    self.send_header(name, value)
                self.end_headers()
                try:
                    for chunk in chunks:
                        self.wfile.write(chunk)
                        self.wfile.flush()
                        if delay:
                            time.sleep(delay)
                except OSError:
                    pass  # the client stopped reading: what a bounded client does
                self.close_connection = True

            do_GET = do_PUT = do_POST = do_HEAD = do_DELETE = _answer

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = "http://127.0.0.1:%d" % self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def json_answer(text, status=200):
    """A whole JSON answer with its length."""
    body = text.encode()
    return status, [("Content-Type", "application/json"),
                    ("Content-Length", str(len(body)))], [body]


def endless_json(size, head=b'{"data_streams":[', item=b"{},", block=1 << 16):
    """`size` bytes of a JSON array of empty objects with no Content-Length (ended by closing
    the connection): the shape that costs json.loads the most memory per byte."""
    def chunks():
        sent = len(head)
        yield head
        piece = item * (block // len(item))
        while sent < size:
            yield piece
            sent += len(piece)
        yield b"{}]}"
    return 200, [("Content-Type", "application/json"), ("Connection", "close")], chunks()
