"""`make screenshots`: the HTML report, full page, as PNGs under docs/img/ (headless Chromium).

    python scripts/screenshots.py [--demo-store URL] [--out docs/img] [--chromium PATH]

Two pages:
  report-demo.png      the demo's store (var/demo/jumbo.sqlite, what `make demo` leaves; made
                       by running `python -m demo` first when it is missing: root, a few minutes)
  report-history.png   a 36-day dual-stack history of the synthetic mesh (fixtures.synth with
                       its regression and flapping path, fixtures.dual_stack), written afresh
                       to var/screenshots/history.sqlite, with a volume matrix
Each report is rendered by jumbo-report (--no-resolve: no DNS here) and shot at its whole
height: Chromium is driven over its DevTools pipe (--remote-debugging-pipe: the page's layout
size, then one capture beyond the viewport), so no extra package is needed.
"""

import argparse
import base64
import fcntl
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for _p in (ROOT, os.path.join(ROOT, "python-jumbo")):
    if _p not in sys.path:
        sys.path.insert(0, _p)

WIDTH = 1280
MAX_HEIGHT = 30000
TIMEOUT = 120
VOLUMES = (("SITE-A", "SITE-E", 4e12), ("SITE-C", "SITE-D", 2e12), ("SITE-A", "SITE-F", 3e12),
           ("SITE-B", "SITE-A", 1e12), ("SITE-F", "SITE-C", 2e12))


class Chromium(object):
    """One headless Chromium driven over the DevTools pipe (fd 3 to it, fd 4 from it)."""

    def __init__(self, path):
        to_r, self._to = os.pipe()
        self._from, from_w = os.pipe()
        self.profile = tempfile.mkdtemp(prefix="jumbo-shot-")

        argv = [path, "--headless=new", "--remote-debugging-pipe", "--no-sandbox", "--disable-gpu",
                "--hide-scrollbars", "--no-first-run", "--user-data-dir=" + self.profile,
                "--window-size=%d,900" % WIDTH, "about:blank"]

        def fds():
            # The pipe ends to the fds Chromium reads and writes (3 and 4), by way of fds
            # above both so that neither move overwrites the other end.
            a, b = fcntl.fcntl(to_r, fcntl.F_DUPFD, 10), fcntl.fcntl(from_w, fcntl.F_DUPFD, 10)
            os.dup2(a, 3)
            os.dup2(b, 4)
        self.proc = subprocess.Popen(argv, preexec_fn=fds, pass_fds=(3, 4),
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_r)
        os.close(from_w)
        self._buf = b""
        self._id = 0

    def call(self, method, session=None, **params):
        self._id += 1
        msg = {"id": self._id, "method": method, "params": params}
        if session:
            msg["sessionId"] = session
        os.write(self._to, json.dumps(msg).encode() + b"\0")
        while True:
            reply = self._read()
            if reply.get("id") == self._id:
                if "error" in reply:
                    raise RuntimeError("%s: %s" % (method, reply["error"]))
                return reply.get("result", {})

    def wait_event(self, name):
        while self._read().get("method") != name:
            pass

    def _read(self):
        while b"\0" not in self._buf:
            chunk = os.read(self._from, 1 << 20)
            if not chunk:
                raise RuntimeError("chromium closed its DevTools pipe (exit %s)" % self.proc.poll())
            self._buf += chunk
        line, self._buf = self._buf.split(b"\0", 1)
        return json.loads(line)

    def shoot(self, html_path, png_path):
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        self.call("Page.enable", session)
        self.call("Page.navigate", session, url="file://" + os.path.abspath(html_path))
        self.wait_event("Page.loadEventFired")
        size = self.call("Page.getLayoutMetrics", session)["cssContentSize"]
        height = min(int(size["height"]) + 1, MAX_HEIGHT)
        self.call("Emulation.setDeviceMetricsOverride", session, width=WIDTH, height=height,
                  deviceScaleFactor=1, mobile=False)
        shot = self.call("Page.captureScreenshot", session, format="png", captureBeyondViewport=True,
                         clip={"x": 0, "y": 0, "width": WIDTH, "height": height, "scale": 1})
        with open(png_path, "wb") as out:
            out.write(base64.b64decode(shot["data"]))
        self.call("Target.closeTarget", targetId=target)
        return height

    def close(self):
        try:
            self.call("Browser.close")
        except (RuntimeError, OSError):
            pass
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.profile, ignore_errors=True)


def history_store(workdir):
    """The 36-day dual-stack history as a fresh SQLite store, and its volume matrix."""
    from fixtures import dual_stack, synth
    path = os.path.join(workdir, "history.sqlite")
    for name in (path, path + "-wal", path + "-shm"):
        if os.path.exists(name):
            os.remove(name)
    from jumbo.archive.stores import open_store
    store = open_store("sqlite:///" + path)
    try:
        batch = []
        for rec in dual_stack.records(synth.Mesh.small(days=36)):
            batch.append(rec)
            if len(batch) == 2000:
                _put(store, batch)
        _put(store, batch)
    finally:
        store.close()
    volumes = os.path.join(workdir, "history-volumes.csv")
    with open(volumes, "w") as out:
        out.write("source_site,dest_site,bytes\n")
        for a, b, v in VOLUMES:
            out.write("%s,%s,%d\n" % (a, b, v))
    return "sqlite:///" + path, volumes


def _put(store, batch):
    refused = [o for o in store.put_many(batch) if o]
    if refused:
        raise SystemExit("screenshots: the store refused records: %s" % refused[:3])
    del batch[:]


def demo_store():
    path = os.path.join(ROOT, "var", "demo", "jumbo.sqlite")
    if not os.path.exists(path):
        print("screenshots: no demo store at %s: running the demo first (python -m demo)" % path,
              flush=True)
        subprocess.check_call([sys.executable, "-m", "demo"], cwd=ROOT)
    return "sqlite:///" + path


def render(store, html_path, extra=()):
    from jumbo.report import cli
    status = cli.main(["--store", store, "--no-resolve", "--format", "html", "--out", html_path]
                      + list(extra))
    if status:
        raise SystemExit("screenshots: jumbo-report failed (exit %d) on %s" % (status, store))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--demo-store", help="the demo's store URL (default var/demo/jumbo.sqlite)")
    p.add_argument("--out", default=os.path.join(ROOT, "docs", "img"))
    p.add_argument("--chromium", default="/usr/bin/chromium")
    args = p.parse_args(argv)
    workdir = os.path.join(ROOT, "var", "screenshots")
    os.makedirs(workdir, exist_ok=True)
    os.makedirs(args.out, exist_ok=True)
    history, volumes = history_store(workdir)
    demo = args.demo_store or demo_store()
    # The demo's own report options: its sites file and volume matrix, when it left them.
    demo_dir = os.path.join(ROOT, "var", "demo")
    demo_extra = [x for name, opt in (("sites.txt", "--sites"), ("volumes.csv", "--volumes"))
                  if args.demo_store is None and os.path.exists(os.path.join(demo_dir, name))
                  for x in (opt, os.path.join(demo_dir, name))]
    pages = [("report-demo", demo, demo_extra),
             ("report-history", history, ("--volumes", volumes))]
    browser = Chromium(args.chromium)
    try:
        for name, store, extra in pages:
            html_path = os.path.join(workdir, name + ".html")
            render(store, html_path, extra)
            png = os.path.join(args.out, name + ".png")
            height = browser.shoot(html_path, png)
            print("screenshots: %s (%d x %d px, from %s)" % (os.path.relpath(png, ROOT), WIDTH,
                                                              height, store), flush=True)
    finally:
        browser.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
