"""A STAND-IN for Grafana's HTTP API: only the calls perfSONAR's pSConfig Grafana agent makes.

Grafana itself cannot be had here. This small HTTP server answers exactly the endpoints, methods
and authentication that `psconfig/grafana/agent.py` of perfsonar/psconfig 5.2.4 (tarball
psconfig-5.2.4-3ba9927.tar.gz, `psconfig/perfsonar-psconfig`) uses, with the answer fields that
code reads, and records every request so a test can check what the agent posted. Read from that
source (method name: call it makes -> what it reads from the answer):

  _gf_test_connection           GET    /api/org                  only the status
  _gf_find_datasource           GET    /api/datasources/name/N   "uid", "type" (404 when absent)
  _gf_list_datasources_by_name  GET    /api/datasources          list of {"name", "type", "uid"}
  _gf_list_dashboards_by_tag    GET    /api/search?type=dash-db&tag=T   list of {"uid"}
  _gf_create_datasource         POST   /api/datasources          {"datasource": {"uid", "type"}}
  _gf_update_datasource         PUT    /api/datasources/uid/U    {"datasource": {"uid", "type"}}
  _gf_find_folder               GET    /api/folders              list of {"title", "uid"}
  _gf_create_folder             POST   /api/folders  {"title"}   "uid"
  _gf_set_home_dashboard        PATCH  /api/org/preferences {"homeDashboardUID"}   any JSON
  _gf_create_dashboard          POST   /api/dashboards/db {"dashboard", "overwrite", "folderUid"}
                                                                 "url" (the matrix cells link to it)
  _gf_delete_dashboard          DELETE /api/dashboards/uid/U     only the status

Authentication as `_gf_build_header`/`_gf_build_auth` send it: "Authorization: Bearer <token>"
or HTTP basic user:password; anything else gets 401, as Grafana answers. Like Grafana, a
dashboard post is refused (400) when its body is not JSON, its dashboard has no title, its uid
is not Grafana's uid alphabet (at most 40 of [A-Za-z0-9_-]) or its folderUid names no folder;
the answer's "url" is Grafana's "/d/<uid>/<slug>".

`tests/test_psconfig_grafana_agent.py` checks this table against the agent's source text.
"""

import base64
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit

# (method, path pattern) of every call the agent makes; the test greps agent.py for each
ENDPOINTS = (
    ("get", "/api/org"),
    ("get", "/api/datasources/name/{name}"),
    ("get", "/api/datasources"),
    ("post", "/api/datasources"),
    ("put", "/api/datasources/uid/{uid}"),
    ("get", "/api/search?type=dash-db&tag={tag}"),
    ("get", "/api/folders"),
    ("post", "/api/folders"),
    ("patch", "/api/org/preferences"),
    ("post", "/api/dashboards/db"),
    ("delete", "/api/dashboards/uid/{uid}"),
)

UID = re.compile(r"^[A-Za-z0-9_-]{1,40}$")


def slug(title):
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")


class GrafanaStandIn(object):
    """The stand-in's state (datasources, folders, dashboards) and the requests it saw."""

    def __init__(self, token=None, user=None, password=None, datasources=()):
        self.token, self.user, self.password = token, user, password
        self.datasources = [dict(ds) for ds in datasources]
        self.folders = []
        self.dashboards = {}      # uid -> {"dashboard", "folderUid"}
        self.requests = []        # (method, path, body or None, status)
        self.preferences = {}
        self._lock = threading.Lock()
        self._server = None
        self._thread = None

    # -- the server ------------------------------------------------------------------------

    def start(self, host="127.0.0.1", port=0):
        standin = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):   # quiet: the test reads self.requests
                pass

            def _serve(self, method):
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                status, answer = standin.handle(method, self.path, self.headers, raw)
                data = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                self._serve("get")

            def do_POST(self):
                self._serve("post")

            def do_PUT(self):
                self._serve("put")

            def do_PATCH(self):
                self._serve("patch")

            def do_DELETE(self):
                self._serve("delete")

        self._server = ThreadingHTTPServer((host, port), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return "http://%s:%d" % self._server.server_address[:2]

    def stop(self):
        if self._server:
            self._server.shutdown()
            self._server.server_close()
            self._thread.join(10)
            self._server = None

    # -- the API ---------------------------------------------------------------------------

    def _authorized(self, headers):
        auth = headers.get("Authorization") or ""
        if self.token is None and self.user is None:
            return True
        if self.token is not None and auth == "Bearer %s" % self.token:
            return True
        if self.user is not None and auth.startswith("Basic "):
            try:
                given = base64.b64decode(auth[6:]).decode()
            except (ValueError, UnicodeDecodeError):
                return False
            return given == "%s:%s" % (self.user, self.password)
        return False

    def handle(self, method, target, headers, raw):
        with self._lock:
            body = None
            if raw:
                try:
                    body = json.loads(raw.decode())
                except ValueError:
                    self.requests.append((method, target, raw, 400))
                    return 400, {"message": "bad request data"}
            if not self._authorized(headers):
                status, answer = 401, {"message": "Unauthorized"}
            else:
                status, answer = self._route(method, target, body)
            self.requests.append((method, target, body, status))
            return status, answer

    def _route(self, method, target, body):
        parts = urlsplit(target)
        path, query = unquote(parts.path), parse_qs(parts.query)
        if (method, path) == ("get", "/api/org"):
            return 200, {"id": 1, "name": "Main Org."}
        if method == "get" and path.startswith("/api/datasources/name/"):
            name = path[len("/api/datasources/name/"):]
            for ds in self.datasources:
                if ds["name"] == name:
                    return 200, ds
            return 404, {"message": "Data source not found"}
        if (method, path) == ("get", "/api/datasources"):
            return 200, self.datasources
        if (method, path) == ("post", "/api/datasources"):
            return self._create_datasource(body)
        if method == "put" and path.startswith("/api/datasources/uid/"):
            return self._update_datasource(path[len("/api/datasources/uid/"):], body)
        if (method, path) == ("get", "/api/search"):
            tags = query.get("tag", [])
            if query.get("type", ["dash-db"]) != ["dash-db"]:
                return 200, []
            return 200, [self._hit(uid) for uid, d in sorted(self.dashboards.items())
                         if all(t in d["dashboard"].get("tags", []) for t in tags)]
        if (method, path) == ("get", "/api/folders"):
            return 200, self.folders
        if (method, path) == ("post", "/api/folders"):
            if not isinstance(body, dict) or not body.get("title"):
                return 400, {"message": "folder title cannot be empty"}
            folder = {"id": len(self.folders) + 1, "uid": "folder-%d" % (len(self.folders) + 1),
                      "title": body["title"]}
            self.folders.append(folder)
            return 200, dict(folder, url="/dashboards/f/%s/" % folder["uid"])
        if (method, path) == ("patch", "/api/org/preferences"):
            if not isinstance(body, dict):
                return 400, {"message": "bad request data"}
            self.preferences.update(body)
            return 200, {"message": "Preferences updated"}
        if (method, path) == ("post", "/api/dashboards/db"):
            return self._save_dashboard(body)
        if method == "delete" and path.startswith("/api/dashboards/uid/"):
            uid = path[len("/api/dashboards/uid/"):]
            gone = self.dashboards.pop(uid, None)
            if gone is None:
                return 404, {"message": "Dashboard not found"}
            return 200, {"title": gone["dashboard"]["title"], "message": "Dashboard deleted"}
        return 404, {"message": "Not found"}

    def _hit(self, uid):
        dash = self.dashboards[uid]["dashboard"]
        return {"uid": uid, "title": dash["title"], "type": "dash-db",
                "tags": dash.get("tags", []), "url": "/d/%s/%s" % (uid, slug(dash["title"]))}

    def _create_datasource(self, body):
        if not isinstance(body, dict) or not body.get("name") or not body.get("type"):
            return 400, {"message": "name and type are required"}
        if any(ds["name"] == body["name"] for ds in self.datasources):
            return 409, {"message": "data source with the same name already exists"}
        ds = dict(body, id=len(self.datasources) + 1, uid="ds-%d" % (len(self.datasources) + 1))
        self.datasources.append(ds)
        return 200, {"datasource": ds, "id": ds["id"], "name": ds["name"],
                     "message": "Datasource added"}

    def _update_datasource(self, uid, body):
        for i, ds in enumerate(self.datasources):
            if ds["uid"] == uid and isinstance(body, dict):
                self.datasources[i] = dict(body, id=ds["id"], uid=uid)
                return 200, {"datasource": self.datasources[i], "id": ds["id"],
                             "name": body.get("name"), "message": "Datasource updated"}
        return 404, {"message": "Data source not found"}

    def _save_dashboard(self, body):
        if not isinstance(body, dict) or not isinstance(body.get("dashboard"), dict):
            return 400, {"message": "bad request data"}
        dash = body["dashboard"]
        if not isinstance(dash.get("title"), str) or not dash["title"].strip():
            return 400, {"message": "Dashboard title cannot be empty"}
        uid = dash.get("uid")
        if not isinstance(uid, str) or not UID.match(uid):
            return 400, {"message": "uid contains illegal characters or is too long"}
        folder = body.get("folderUid")
        if folder and not any(f["uid"] == folder for f in self.folders):
            return 400, {"message": "folder not found"}
        if uid in self.dashboards and not body.get("overwrite"):
            return 412, {"message": "A dashboard with the same uid already exists"}
        version = self.dashboards.get(uid, {}).get("version", 0) + 1
        self.dashboards[uid] = {"dashboard": dash, "folderUid": folder, "version": version}
        return 200, {"id": len(self.dashboards), "uid": uid, "status": "success",
                     "version": version, "slug": slug(dash["title"]),
                     "url": "/d/%s/%s" % (uid, slug(dash["title"]))}

    def posted_dashboards(self):
        """Every dashboard body the agent posted, in order."""
        return [b["dashboard"] for m, p, b, s in self.requests
                if (m, p) == ("post", "/api/dashboards/db") and isinstance(b, dict)]
