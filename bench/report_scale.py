"""The report at WLCG scale, with the action list, beside the code before on the same store.

    python -m bench report-scale [--hosts 600] [--results 5000000] [--stores sqlite,opensearch]
                                 [--before main] [--runs 3] [--workdir var/bench-report-scale]
                                 [--opensearch-url http://127.0.0.1:$OPENSEARCH_PORT]

The store holds every path of a dual-stack mesh of --hosts hosts (fixtures.synth.Mesh.large,
sites of 5 hosts, with its 1500-configured sites, small core links and firewalled sites; each
result followed by its IPv6 twin, fixtures.dual_stack): 600 hosts make 2 x 600 x 599 =
718,800 directed path-families, and --results pmtu results of history spread over them (5M:
seven days). It is built once and cached: SQLite in WORKDIR/mesh-H-R.sqlite (bulk, one
transaction, the store's own schema and triggers: fixtures.synth.write_sqlite_fast), and on
OpenSearch the index prefix benchscale<H>x<R>_ (_bulk, refresh off while loading), marked
done only when complete; a later run reuses it.

The code before is `git archive <--before> python-jumbo` unpacked into WORKDIR/before-<rev>;
the code after is this tree's. Each run is `jumbo-report --store URL --format json` in a
child started from a small launcher (so neither the loader's memory nor the launcher's
start-up is charged to the report): its wall time and peak RSS (ru_maxrss). Before and after
alternate, --runs times each; the median is printed with the ratio after/before and the
bounds (< 3 s, < 500 MB) beside each figure. The machine's load is printed with them: compare
the ratio, not the seconds, on a busy machine. Beside them, the floor (bench.report_floor):
every path's latest row read from the store and written as the per-path list, nothing else,
which no report that lists every path can go below on that machine.
"""

import argparse
import json
import os
import queue
import statistics
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

from .report import launch_report

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIBRARY = os.path.join(ROOT, "python-jumbo")
BOUND_SECONDS = 3.0
BOUND_MB = 500.0
# Bulk requests in flight while the loader encodes the next batch.
SENDERS = 2


def _path():
    for p in (LIBRARY, ROOT):
        if p not in sys.path:
            sys.path.insert(0, p)


def records(hosts, results):
    """(generator of exactly `results` pmtu records over every directed pair, each IPv4 one
    followed by its IPv6 twin; the number of path-families). Pair by pair, day by day: a
    pair's truth is computed once and its later days copy it (with their own time and run)
    unless the pair is one of the mesh's special cases (regression, flapping path), whose
    days differ. The first pairs get one day more than the rest, so that every path-family
    has its history and the total is exactly `results`."""
    _path()
    from fixtures import dual_stack, synth
    mesh = synth.Mesh.large(hosts=hosts, hosts_per_site=5)
    n_pairs = len(mesh.hosts) * (len(mesh.hosts) - 1)
    families = 2 * n_pairs
    if results < families:
        raise SystemExit("bench report-scale: %d results cannot cover %d path-families"
                         % (results, families))
    per, extra = divmod(results, families)
    mesh.days = per + (1 if extra else 0)
    mesh.regress_day = max(1, mesh.days - 4)
    special = set(mesh.special.values())
    special |= set((b, a) for a, b in special)

    def gen():
        for i, (a, b) in enumerate(mesh.pairs()):
            days = per + (1 if 2 * i < extra else 0)
            first = mesh.pmtu_record(a, b, 0)
            for day in range(days):
                if day == 0:
                    rec = first
                elif (a.name, b.name) in special:
                    rec = mesh.pmtu_record(a, b, day)
                else:
                    start = mesh._time(day, 0, a, b)
                    run = mesh._base("pmtu", a, b, start, "pmtu")
                    rec = dict(first, id=run["id"], run_href=run["run_href"],
                               task_href=run["task_href"], start=start)
                yield rec
                yield dual_stack.twin(rec)
    return gen(), families


def _progress(what, every=250000):
    t0 = time.time()

    def wrap(gen, total):
        for n, rec in enumerate(gen, 1):
            yield rec
            if n % every == 0 or n == total:
                s = time.time() - t0
                print("  %-10s %d/%d records (%.0f%%) in %.0f s, %.0f/s"
                      % (what, n, total, 100.0 * n / total, s, n / max(s, 1e-9)), flush=True)
    return wrap


def sqlite_store(workdir, hosts, results):
    path = os.path.join(workdir, "mesh-%d-%d.sqlite" % (hosts, results))
    done = path + ".done"
    if os.path.exists(done):
        return "sqlite:///" + path
    for name in (path, path + "-wal", path + "-shm"):
        if os.path.exists(name):
            os.remove(name)
    gen, families = records(hosts, results)
    print("bench report-scale: building %s (%d path-families, %d results)" % (path, families, results),
          flush=True)
    from fixtures import synth
    synth.write_sqlite_fast(path, _progress("sqlite")(gen, results))
    import sqlite3
    conn = sqlite3.connect(path)
    conn.execute("ANALYZE")
    conn.close()
    open(done, "w").close()
    return "sqlite:///" + path


def _http(url, method="GET", body=None, ndjson=False):
    data = body.encode() if isinstance(body, str) else (json.dumps(body).encode() if body else None)
    headers = {"Content-Type": "application/x-ndjson" if ndjson else "application/json"}
    req = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=600) as resp:
            return resp.status, json.loads(resp.read() or b"null")
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read() or b"null")


def opensearch_store(base, hosts, results, batch=5000):
    """The prefix's URL, loading it first unless an earlier run completed it."""
    _path()
    prefix = "benchscale%dx%d_" % (hosts, results)
    url = "%s/?prefix=%s" % (base, prefix)
    marker = "%s/%sbench_done/_doc/done" % (base, prefix)
    if _http(marker)[0] == 200:
        return url
    from jumbo.archive import record as rmod
    from jumbo.archive.stores import open_store
    from jumbo.archive.opensearch.store import HISTORY_INDEX, LATEST_INDEX, latest_document
    store = open_store(url)
    store.ensure_ready()
    history = prefix + HISTORY_INDEX
    store.request("PUT", "/%s/_settings" % history,
                  {"index": {"refresh_interval": "-1", "translog.durability": "async"}})
    dumps = json.JSONEncoder(separators=(",", ":")).encode
    latest = {}
    lines = []
    # Bulk requests are sent by SENDERS threads while this one encodes the next batches (a
    # bounded queue: at most 2 x SENDERS batches wait in memory); the first failure stops it.
    pending = queue.Queue(maxsize=2 * SENDERS)
    failures = []

    def sender():
        while True:
            body = pending.get()
            if body is None:
                return
            if failures:
                continue
            status, parsed = _http(base + "/_bulk", "POST", body, ndjson=True)
            if status != 200 or parsed.get("errors"):
                failures.append("bench report-scale: bulk load failed: %s" % json.dumps(parsed)[:500])

    senders = [threading.Thread(target=sender, daemon=True) for _ in range(SENDERS)]
    for thread in senders:
        thread.start()

    def flush():
        if failures:
            raise SystemExit(failures[0])
        pending.put("\n".join(lines) + "\n")
        del lines[:]

    gen, families = records(hosts, results)
    print("bench report-scale: loading %s (%d path-families, %d results)" % (url, families, results),
          flush=True)
    try:
        for rec in _progress("opensearch")(gen, results):
            key = rmod.path_key(rec)
            lines.append('{"create":{"_index":"%s","_id":%s}}' % (history, dumps(rec["id"])))
            lines.append(dumps({"@timestamp": rec["start"], "jumbo": dict(rec, path=key)}))
            best = latest.get(key)
            if best is None or rec["start"] >= best["start"]:
                latest[key] = rec
            if len(lines) >= 2 * batch:
                flush()
        for key, rec in latest.items():
            lines.append(dumps({"index": {"_index": prefix + LATEST_INDEX, "_id": key}}))
            lines.append(dumps(latest_document(rec, key)))
            if len(lines) >= 2 * batch:
                flush()
        if lines:
            flush()
    finally:
        for _ in senders:
            pending.put(None)
        for thread in senders:
            thread.join()
    if failures:
        raise SystemExit(failures[0])
    store.request("PUT", "/%s/_settings" % history,
                  {"index": {"refresh_interval": "1s", "translog.durability": "request"}})
    _http("%s/%s,%s%s/_refresh" % (base, history, prefix, LATEST_INDEX), "POST")
    _http("%s/%s,%s%s/_forcemerge?max_num_segments=1" % (base, history, prefix, LATEST_INDEX), "POST")
    store.close()
    _http(marker + "?refresh=true", "PUT", {"done": True})
    return url


def before_tree(workdir, rev):
    """This repository's python-jumbo at `rev`, unpacked once; (its library path, the commit)."""
    sha = subprocess.check_output(["git", "-C", ROOT, "rev-parse", "--short", rev],
                                  universal_newlines=True).strip()
    dest = os.path.join(workdir, "before-" + sha)
    if not os.path.isdir(os.path.join(dest, "python-jumbo")):
        os.makedirs(dest, exist_ok=True)
        archive = subprocess.Popen(["git", "-C", ROOT, "archive", sha, "python-jumbo"],
                                   stdout=subprocess.PIPE)
        subprocess.check_call(["tar", "-x", "-C", dest], stdin=archive.stdout)
        if archive.wait():
            raise SystemExit("bench report-scale: git archive %s failed" % sha)
    return os.path.join(dest, "python-jumbo"), sha


def run_report(library, url, out, extra=()):
    """(seconds, peak MB, exit status, stderr) of one report run with `library`'s code."""
    seconds, mb, status, err = launch_report(
        ["--store", url, "--format", "json", "--out", out] + list(extra),
        # No reverse-name lookups on either side (JUMBO_NO_RESOLVE: a code before --no-resolve
        # ignores it): both report the same work, without waiting on DNS.
        dict(os.environ, PYTHONPATH=library, JUMBO_NO_RESOLVE="1"), cwd="/")
    if seconds is None:
        return float("nan"), float("nan"), status, err
    return seconds, mb, status, err


FLOOR_MAIN = "import sys; from bench.report_floor import main; sys.exit(main(sys.argv[1:]))"


def run_floor(url, out):
    """(seconds, peak MB) of bench.report_floor on the store: every path's latest row read
    and written, nothing else (this tree's reader)."""
    seconds, mb, status, err = launch_report(
        ["--store", url, "--out", out], dict(os.environ, PYTHONPATH=os.pathsep.join((LIBRARY, ROOT))),
        cwd="/", code=FLOOR_MAIN)
    if status or seconds is None:
        raise SystemExit("bench report-scale: the floor run failed (exit %s): %s" % (status, err[-500:]))
    return seconds, mb


def _load():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def compare(store, url, before_lib, runs, workdir):
    """Before and after alternating on one store; prints one block, returns its figures."""
    figures = {"before": [], "after": [], "floor": []}
    outs = {}
    for _ in range(runs):
        figures["floor"].append(run_floor(url, os.path.join(workdir, "floor-%s.json" % store)))
        for name, lib, extra in (("before", before_lib, ()), ("after", LIBRARY, ("--no-resolve",))):
            outs[name] = os.path.join(workdir, "report-%s-%s.json" % (store, name))
            secs, mb, status, err = run_report(lib, url, outs[name], extra)
            if status:
                raise SystemExit("bench report-scale: %s report failed on %s (exit %d): %s"
                                 % (name, store, status, err[-500:]))
            figures[name].append((secs, mb))
    with open(outs["after"]) as f:
        after = json.load(f)
    med = {k: (statistics.median(s for s, _ in v), max(m for _, m in v)) for k, v in figures.items()}
    b, a, floor = med["before"], med["after"], med["floor"]
    print("%-10s %d paths, %d results; load %s" % (store, after["paths_measured"], after["window"]["results"],
                                                   _load()))
    for name, (secs, mb) in (("before", b), ("after", a)):
        print("  %-7s %6.2f s (bound %.0f s: %s)  %6.0f MB (bound %.0f MB: %s)"
              % (name, secs, BOUND_SECONDS, "ok" if secs < BOUND_SECONDS else "OVER", mb, BOUND_MB,
                 "ok" if mb < BOUND_MB else "OVER"))
    print("  floor   %6.2f s  %6.0f MB: every path's latest row read and written, nothing else"
          " (bench.report_floor); after/floor: time x%.2f" % (floor[0], floor[1], a[0] / floor[0]))
    print("  after/before: time x%.2f, memory x%.2f; %d tickets, first: %s"
          % (a[0] / b[0], a[1] / b[1], after["actions"]["total"],
             (after["actions"]["tickets"] or [{}])[0].get("problem")))
    return med


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m bench report-scale", description=__doc__.split("\n\n")[0])
    p.add_argument("--hosts", type=int, default=600)
    p.add_argument("--results", type=int, default=5000000)
    p.add_argument("--stores", default="sqlite,opensearch")
    p.add_argument("--before", default="main", help="the git revision whose report is 'before' (main)")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--workdir", default=os.path.join(ROOT, "var", "bench-report-scale"))
    p.add_argument("--opensearch-url", default="http://127.0.0.1:%s" % os.environ.get("OPENSEARCH_PORT", "9270"))
    args = p.parse_args(argv)
    if args.hosts < 10 or args.results < 1 or args.runs < 1:
        p.error("--hosts >= 10, --results >= 1, --runs >= 1")
    os.makedirs(args.workdir, exist_ok=True)
    before_lib, sha = before_tree(args.workdir, args.before)
    print("bench report-scale: before = %s (%s), after = this tree" % (args.before, sha), flush=True)
    for store in [s for s in args.stores.split(",") if s]:
        if store == "sqlite":
            url = sqlite_store(args.workdir, args.hosts, args.results)
        elif store == "opensearch":
            url = opensearch_store(args.opensearch_url.rstrip("/"), args.hosts, args.results)
        else:
            p.error("--stores: sqlite and/or opensearch")
        compare(store, url, before_lib, args.runs, args.workdir)
    return 0
