"""Adoption report at mesh scale: 300 hosts (~90,000 directed paths), 1M and 5M stored results.

    python -m bench report [--hosts 300] [--results 1000000,5000000] [--stores sqlite,opensearch]
                           [--opensearch-url http://127.0.0.1:$OPENSEARCH_PORT] [--workdir var/bench-report]
                           [--format json] [--keep] [--reuse]

The synthetic history (fixtures.synth.Mesh.large: 60 sites of 5 hosts, 1500-configured
sites, small core links, firewalled sites with inbound black holes, plus latency and
throughput results) is bulk-loaded into each store: SQLite with executemany in one
transaction using the embedded store's own schema; OpenSearch with _bulk into jumbo_history
(the adoption records) and the latest-per-path index, in the archiver's layout. Then the report runs
in a child process (`jumbo-report --store URL --format json`); its wall time and its peak
memory (ru_maxrss of the report process, i.e. the whole process as run, started from a small
launcher so that the loader's own memory is not charged to it) are printed for each size, and
the ratio of the largest size's time to the smallest's. Targets on this 2-core machine: < 3 s
and < 250 MB for each store at 5M, and a 5M/1M time ratio <= 1.2 (the report's cost must follow
the paths, not the stored history). Loading prints its progress; --keep keeps the loaded data
and --reuse reports on it again without reloading. The OpenSearch node is started with
scripts/opensearch.sh when it is not running (and stopped again afterwards).
"""

import argparse
import json
import os
import subprocess
import sys
import time
import urllib.request
import uuid

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIBRARY = os.path.join(ROOT, "python-jumbo")
TARGET_SECONDS = 3.0
TARGET_MB = 250.0
TARGET_RATIO = 1.2


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([ROOT, LIBRARY, env.get("PYTHONPATH", "")])
    return env


def _mesh(hosts):
    for path in (LIBRARY, ROOT):        # the library, and fixtures/ (dev-only, at the root)
        if path not in sys.path:
            sys.path.insert(0, path)
    from fixtures import synth
    return synth.Mesh.large(hosts=hosts, hosts_per_site=5)


def _records(mesh, results):
    """The pmtu history (exactly `results` records) followed by the latency/throughput ones."""
    n_pairs = len(mesh.hosts) * (len(mesh.hosts) - 1)
    mesh.days = max(1, -(-results // n_pairs))
    mesh.regress_day = max(1, mesh.days - 4)
    yield from mesh.records(extras=False, limit=results)
    for rec in mesh.records(pmtu=False, extras=True):
        yield rec


def _with_progress(records, store, total, t0, every=250000):
    for n, rec in enumerate(records, 1):
        yield rec
        if n % every == 0:
            _progress(store, n, total, t0)


def load_sqlite(path, mesh, results):
    from fixtures import synth
    for name in (path, path + "-wal", path + "-shm"):
        if os.path.exists(name):
            os.remove(name)
    t = time.time()
    n = synth.write_sqlite_fast(path, _with_progress(_records(mesh, results), "sqlite", results, t))
    _progress("sqlite", n, n, t)
    import sqlite3
    conn = sqlite3.connect(path)
    conn.execute("ANALYZE")
    conn.close()
    return n, time.time() - t


def _http(url, method="GET", body=None, ndjson=False):
    data = None
    headers = {}
    if body is not None:
        data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
        headers["Content-Type"] = "application/x-ndjson" if ndjson else "application/json"
    req = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=300) as resp:
            return resp.status, json.loads(resp.read() or b"null")
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read() or b"null")


def _progress(store, n, total, t0):
    """One line of loading progress (total: the pmtu results; latency/throughput follow them)."""
    secs = time.time() - t0
    print("  %-10s loading %d/%d records (%.0f%%) in %.0f s, %.0f/s"
          % (store, n, total, 100.0 * n / max(total, 1), secs, n / max(secs, 1e-9)), flush=True)


def load_opensearch(base, prefix, mesh, results, batch=20000):
    """_bulk the history into <prefix>jumbo_history and the newest per path into
    <prefix>jumbo_latest, in the archiver's layout (its templates, its adoption records).

    Built for millions of documents on a small node: refresh off and the translog synced
    asynchronously while loading (restored afterwards), big bulk requests, and one request in
    flight on a sender thread while the next batch is encoded here."""
    import queue
    import threading
    from jumbo.archive import record as rmod
    from jumbo.archive.stores import open_store
    from jumbo.archive.opensearch.store import HISTORY_INDEX, LATEST_INDEX, latest_document
    store = open_store("%s/?prefix=%s" % (base, prefix))
    store.ensure_ready()
    history = prefix + HISTORY_INDEX
    loading = {"index": {"refresh_interval": "-1", "translog.durability": "async"}}
    store.request("PUT", "/%s/_settings" % history, loading)
    t = time.time()
    latest = {}
    lines, n = [], 0
    total = results
    pending = queue.Queue(maxsize=1)
    failure = []

    def sender():
        while True:
            body = pending.get()
            if body is None:
                return
            if failure:
                continue
            status, parsed = _http(base + "/_bulk", "POST", body, ndjson=True)
            if status != 200 or not isinstance(parsed, dict) or parsed.get("errors"):
                items = parsed.get("items", []) if isinstance(parsed, dict) else []
                bad = [i for i in items if list(i.values())[0].get("status", 500) >= 300]
                failure.append(json.dumps(bad[0] if bad else parsed)[:500])

    thread = threading.Thread(target=sender, daemon=True)
    thread.start()

    def flush():
        if failure:
            raise SystemExit("bench: bulk load failed: %s" % failure[0])
        pending.put("\n".join(lines) + "\n")
        del lines[:]

    dumps = json.JSONEncoder(separators=(",", ":")).encode
    for rec in _records(mesh, results):
        doc = {"@timestamp": rec["start"], "jumbo": dict(rec, path=rmod.path_key(rec))}
        lines.append('{"create":{"_index":"%s","_id":%s}}' % (history, dumps(rec["id"])))
        lines.append(dumps(doc))
        key = rmod.path_key(rec)
        best = latest.get(key)
        if best is None or rec["start"] >= best["start"]:
            latest[key] = rec
        n += 1
        if len(lines) >= 2 * batch:
            flush()
            if n % 250000 < batch:
                _progress("opensearch", n, total, t)
    if lines:
        flush()
    for key, rec in latest.items():
        lines.append(dumps({"index": {"_index": prefix + LATEST_INDEX, "_id": key}}))
        lines.append(dumps(latest_document(rec, key)))
        if len(lines) >= 2 * batch:
            flush()
    if lines:
        flush()
    pending.put(None)
    thread.join()
    if failure:
        raise SystemExit("bench: bulk load failed: %s" % failure[0])
    _progress("opensearch", n, n, t)
    store.request("PUT", "/%s/_settings" % history,
                  {"index": {"refresh_interval": "1s", "translog.durability": "request"}})
    _http("%s/%s,%s%s/_refresh" % (base, history, prefix, LATEST_INDEX), "POST")
    _http("%s/%s,%s%s/_forcemerge?max_num_segments=1" % (base, history, prefix, LATEST_INDEX),
          "POST")
    store.close()
    return n, time.time() - t


# Runs the report as a grandchild and prints its peak RSS. Linux folds the memory image a
# process had before exec into its ru_maxrss, so a report started straight from this process
# after a load (whose records fill hundreds of MB) was charged this process's size: 617 MB
# measured for a 190 MB report. A fresh fork of this small launcher starts from its size.
# The launcher times the report itself (its own start-up is not the report's).
LAUNCHER = """import os, sys, time
start = time.monotonic()
pid = os.fork()
if pid == 0:
    os.execv(sys.executable, [sys.executable] + sys.argv[1:])
_pid, status, usage = os.wait4(pid, 0)
sys.stderr.write("BENCH-PEAK-KB %d %.6f\\n" % (usage.ru_maxrss, time.monotonic() - start))
sys.exit(os.waitstatus_to_exitcode(status))
"""


REPORT_MAIN = "import sys; from jumbo.report.cli import main; sys.exit(main(sys.argv[1:]))"


def launch_report(args, env, cwd=None, code=REPORT_MAIN):
    """Run jumbo-report (or another `code`) with `args` through LAUNCHER: (seconds, peak MB,
    exit status, stderr); seconds and MB are None when the launcher printed no figure (it
    died first)."""
    proc = subprocess.run([sys.executable, "-c", LAUNCHER, "-c", code] + list(args),
                          env=env, cwd=cwd, stderr=subprocess.PIPE, universal_newlines=True)
    lines = proc.stderr.splitlines()
    peak = [line.split() for line in lines if line.startswith("BENCH-PEAK-KB ")]
    err = "\n".join(line for line in lines if not line.startswith("BENCH-PEAK-KB "))
    if not peak:
        return None, None, proc.returncode, err
    return float(peak[-1][2]), int(peak[-1][1]) / 1024.0, proc.returncode, err


def run_report(url, fmt, out):
    """Run jumbo-report in a child; (seconds, peak MB of the report process, exit status,
    stderr)."""
    t = time.time()
    seconds, mb, status, err = launch_report(["--store", url, "--format", fmt, "--out", out],
                                             _env())
    if seconds is None:
        return time.time() - t, float("nan"), status, err
    return seconds, mb, status, err


def _answers(url):
    try:
        urllib.request.urlopen(url, timeout=2).read()
        return True
    except Exception:  # noqa: BLE001
        return False


def _pmtu_count(url):
    """Number of pmtu results already in a store (for --reuse), 0 when there is none."""
    from jumbo.archive.queries import open_queries, Window
    try:
        queries = open_queries(url)
    except Exception:  # noqa: BLE001 - no such store yet
        return 0
    try:
        return queries.count(Window())[0]
    except Exception:  # noqa: BLE001
        return 0
    finally:
        queries.close()


def _current_layout(store, url):
    """Whether reused data is in the layout this code writes (else the report would measure a
    fallback): a SQLite store is upgraded by opening it, as the archiver does; an OpenSearch
    one must pass the archiver's own set-up check (its indices at TEMPLATE_VERSION)."""
    from jumbo.archive.stores import open_store
    opened = open_store(url)
    try:
        if store == "sqlite":
            return True
        from jumbo.archive.opensearch import setup
        return not setup.problems(opened)
    finally:
        opened.close()


def _drop_prefix(base, prefix):
    _http("%s/_data_stream/%s*" % (base, prefix), "DELETE")
    _http("%s/%s*" % (base, prefix), "DELETE")
    from jumbo.archive.stores import open_store
    for name, _ in open_store("%s/?prefix=%s" % (base, prefix)).templates():
        _http("%s/_index_template/%s" % (base, name), "DELETE")


def _aligned(text, n, what):
    items = [x for x in (text or "").split(",") if x]
    if items and len(items) != n:
        raise SystemExit("bench report: %s needs one entry per --results value" % what)
    return items or [None] * n


def _options(argv):
    """(args, counts, dbs, prefixes, stores) from the command line, each checked."""
    p = argparse.ArgumentParser(prog="python -m bench report", description=__doc__.split("\n\n")[0])
    p.add_argument("--hosts", type=int, default=300)
    p.add_argument("--results", default="1000000,5000000",
                   help="stored pmtu results, comma-separated (default 1000000,5000000)")
    p.add_argument("--stores", default="sqlite,opensearch")
    p.add_argument("--opensearch-url", default=os.environ.get(
        "JUMBO_BENCH_OPENSEARCH", "http://127.0.0.1:%s" % os.environ.get("OPENSEARCH_PORT", "9270")))
    p.add_argument("--workdir", default=os.path.join(ROOT, "var", "bench-report"))
    p.add_argument("--format", default="json", choices=("json", "text", "csv", "html"))
    p.add_argument("--keep", action="store_true",
                   help="keep the loaded data afterwards (SQLite files, OpenSearch prefixes benchrep<N>_)")
    p.add_argument("--reuse", action="store_true",
                   help="report on data kept by an earlier --keep run when it holds N results in the "
                        "layout this code writes (no load)")
    p.add_argument("--sqlite-db", help="report on these already loaded SQLite stores (one per --results)")
    p.add_argument("--opensearch-prefix", help="report on these already loaded index prefixes (one per --results)")
    args = p.parse_args(argv)
    try:
        counts = [int(x) for x in args.results.split(",") if x]
    except ValueError:
        p.error("--results: comma-separated numbers, e.g. 1000000,5000000")
    if not counts or min(counts) <= 0:
        p.error("--results: at least one positive number")
    dbs = _aligned(args.sqlite_db, len(counts), "--sqlite-db")
    prefixes = _aligned(args.opensearch_prefix, len(counts), "--opensearch-prefix")
    os.makedirs(args.workdir, exist_ok=True)
    stores = [s for s in args.stores.split(",") if s]
    unknown = [s for s in stores if s not in ("sqlite", "opensearch")]
    if unknown:
        p.error("unknown store %r (sqlite, opensearch)" % unknown[0])
    return args, counts, dbs, prefixes, stores


def main(argv=None):
    args, counts, dbs, prefixes, stores = _options(argv)
    mesh = _mesh(args.hosts)
    pairs = len(mesh.hosts) * (len(mesh.hosts) - 1)
    print("bench report: %d hosts, %d sites, %d directed paths, %s pmtu results; load average %s"
          % (len(mesh.hosts), len(mesh.sites), pairs, " and ".join("{:,}".format(c) for c in counts),
             " ".join("%.2f" % x for x in os.getloadavg())), flush=True)
    failed = False
    for store in stores:
        measured = {}
        failed |= _bench_store(store, args, counts, dbs, prefixes, measured)
        if len(counts) > 1:
            failed |= not _ratio(store, counts, measured)
    return 1 if failed else 0


def _bench_store(store, args, counts, dbs, prefixes, measured):
    """Every --results size on one store (the OpenSearch node started when none answers, and
    stopped again): True when one missed its target."""
    failed = False
    started_node = False
    base = args.opensearch_url.rstrip("/")
    if store == "opensearch" and not _answers(base):
        port = base.rsplit(":", 1)[-1]
        subprocess.run(["bash", os.path.join(ROOT, "scripts", "opensearch.sh"), "start"],
                       env=dict(os.environ, OPENSEARCH_PORT=port), check=True)
        started_node = True
    try:
        for results, db, given_prefix in zip(counts, dbs, prefixes):
            url, drop = _loaded(store, args, base, results, db, given_prefix)
            failed |= not _measure(store, args, url, results, measured)
            if drop:
                _drop_prefix(base, drop)
    finally:
        if started_node:
            subprocess.run(["bash", os.path.join(ROOT, "scripts", "opensearch.sh"), "stop"],
                           env=dict(os.environ, OPENSEARCH_PORT=base.rsplit(":", 1)[-1]))
    return failed


def _loaded(store, args, base, results, db, given_prefix):
    """The store's URL holding `results` pmtu results (loaded unless given or reusable), and
    the index prefix to drop afterwards (None: keep)."""
    n, secs, drop = 0, 0.0, None
    if store == "sqlite":
        path = os.path.abspath(db) if db else os.path.join(
            args.workdir, "report-bench-%d.db" % results)
        url = "sqlite:///" + path
        if not db and not (args.reuse and _pmtu_count(url) == results
                           and _current_layout(store, url)):
            n, secs = load_sqlite(path, _mesh(args.hosts), results)
    else:
        prefix = given_prefix or ("benchrep%d_" % results if args.keep or args.reuse
                                  else "bench%s_" % uuid.uuid4().hex[:6])
        url = "%s/?prefix=%s" % (base, prefix)
        if not given_prefix and not (args.reuse and _pmtu_count(url) == results
                                     and _current_layout(store, url)):
            _drop_prefix(base, prefix)
            n, secs = load_opensearch(base, prefix, _mesh(args.hosts), results)
        if not given_prefix and not args.keep:
            drop = prefix
    if n:
        print("  %-10s %s: loaded %d records in %.0f s (%.0f/s)"
              % (store, "{:,}".format(results), n, secs, n / max(secs, 1e-9)), flush=True)
    return url, drop


def _measure(store, args, url, results, measured):
    """The report on `url`, its time and peak memory against the targets, printed: ok?"""
    out = os.path.join(args.workdir, "report-%s-%d.%s" % (store, results, args.format))
    run_report(url, args.format, out)          # warm the caches once, as a coordinator would
    secs, mb, status, err = run_report(url, args.format, out)
    ok = status == 0 and secs < TARGET_SECONDS and mb < TARGET_MB
    summary = ""
    if status == 0 and args.format == "json":
        with open(out) as handle:
            r = json.load(handle)
        summary = "paths %d, capable %.1f%%, black holes %d" % (
            r["paths_measured"], 100 * r["capable"], len(r["blackholes"]))
    measured[(store, results)] = (secs, mb)
    print("  %-10s %s: report %.2f s (target < %.0f s), peak %.0f MB (target < %.0f MB) %s"
          "  %s  [load average %.2f]%s"
          % (store, "{:,}".format(results), secs, TARGET_SECONDS, mb, TARGET_MB,
             "OK" if ok else "MISSED", summary, os.getloadavg()[0],
             ("\n    " + err.strip()) if err.strip() else ""), flush=True)
    return ok


def _ratio(store, counts, measured):
    """The largest size's time over the smallest's, against TARGET_RATIO, printed: ok?"""
    lo, hi = min(counts), max(counts)
    (t_lo, m_lo), (t_hi, m_hi) = measured[(store, lo)], measured[(store, hi)]
    ratio = t_hi / max(t_lo, 1e-9)
    ok = ratio <= TARGET_RATIO
    print("  %-10s %s/%s: time ratio %.2f (target <= %.1f) %s, memory ratio %.2f"
          % (store, _short(hi), _short(lo), ratio, TARGET_RATIO, "OK" if ok else "MISSED",
             m_hi / max(m_lo, 1e-9)), flush=True)
    return ok


def _short(n):
    return "%dM" % (n // 1000000) if n % 1000000 == 0 else "%dk" % (n // 1000) if n % 1000 == 0 else str(n)


if __name__ == "__main__":
    sys.exit(main())
