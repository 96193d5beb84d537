"""Archive throughput: N synthetic pmtu results through the real `archive` process into each store.

    python -m bench archive [--stores sqlite,opensearch] [--n 5000,20000]
                            [--opensearch-url http://127.0.0.1:9250]

The records are written to the archive process's stdin as fast as it takes them (a writer
thread) while the replies are read back, one per record; results/s counts from the first
record written to the last reply read; "archive CPU/s" is N over the archive process's own
CPU time (what one core would do without the load of other processes). Peak memory is the archive process's VmHWM. Targets
on the 2-core CI machine: >= 2,000/s into OpenSearch, >= 10,000/s into SQLite, memory flat
as N grows. The OpenSearch node is started with scripts/opensearch.sh if it is not running.
"""

import argparse
import datetime
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import uuid

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIBRARY = os.path.join(ROOT, "python-jumbo")
ARCHIVE = os.path.join(ROOT, "pscheduler-archiver-jumbo", "jumbo", "archive")
TARGETS = {"sqlite": 10000.0, "opensearch": 2000.0}
PATHS = 200


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = LIBRARY + os.pathsep + env.get("PYTHONPATH", "")
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    env.pop("PYTHONUNBUFFERED", None)
    return env


def _lines(n, data):
    """N RFC 7464 records, generated lazily from one template (memory stays flat)."""
    if LIBRARY not in sys.path:
        sys.path.insert(0, LIBRARY)
    from fixtures import samples
    env = samples.pmtu_envelope(0, dest="DEST-HOST", run="RUN-ID")
    env["data"] = data
    template = "\x1e" + json.dumps(env, separators=(",", ":")) + "\n"
    base = datetime.datetime(2026, 5, 20)
    start_text = env["result"]["schedule"]["start"]
    prefix = uuid.uuid4().hex[:8]
    for i in range(n):
        start = (base + datetime.timedelta(seconds=i)).strftime("%Y-%m-%dT%H:%M:%S+00:00")
        yield (template.replace("RUN-ID", "%s-%08d" % (prefix, i))
               .replace("DEST-HOST", "ps-%d.example.org" % (i % PATHS))
               .replace(start_text, start))


def _peak_kb(pid):
    try:
        with open("/proc/%d/status" % pid) as handle:
            for line in handle:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def _cpu_seconds(pid):
    """utime + stime of a live process, in seconds."""
    try:
        with open("/proc/%d/stat" % pid) as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / float(os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError):
        return None


def run_once(n, data):
    """(results/s, peak RSS kB, failures, archive CPU s) for N records through one archive process."""
    proc = subprocess.Popen([ARCHIVE], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            env=_env(), bufsize=1 << 16)
    errors = []

    def writer():
        try:
            for line in _lines(n, data):
                proc.stdin.write(line.encode("utf-8"))
            proc.stdin.flush()
        except (BrokenPipeError, OSError) as err:
            errors.append(str(err))

    started = time.monotonic()
    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    failures = 0
    first_error = None
    for _ in range(n):
        line = proc.stdout.readline()
        if not line:
            errors.append("archive process exited early")
            break
        if b'"succeeded":true' not in line:
            failures += 1
            first_error = first_error or line.decode("utf-8", "replace").strip()
    elapsed = time.monotonic() - started
    peak = _peak_kb(proc.pid)
    cpu = _cpu_seconds(proc.pid)
    thread.join(10)
    proc.stdin.close()
    proc.wait(30)
    if errors:
        raise RuntimeError("; ".join(errors))
    if first_error:
        sys.stderr.write("first failure: %s\n" % first_error[:300])
    return n / elapsed, peak, failures, cpu


def _opensearch(url):
    try:
        urllib.request.urlopen(url, timeout=2).read()
        return url
    except Exception:  # noqa: BLE001 - any failure means no node is listening yet
        pass
    port = url.rsplit(":", 1)[-1].strip("/")
    subprocess.run(["bash", os.path.join(ROOT, "scripts", "opensearch.sh"), "start"],
                   env=dict(os.environ, OPENSEARCH_PORT=port), check=True)
    return url


def _cleanup_opensearch(url, prefix):
    if LIBRARY not in sys.path:
        sys.path.insert(0, LIBRARY)
    from jumbo.archive.stores import open_store
    store = open_store("%s/?prefix=%s" % (url, prefix))
    store.request("DELETE", "/_data_stream/%s*" % prefix)
    store.request("DELETE", "/%s*" % prefix)
    for name, _ in store.templates():
        store.request("DELETE", "/_index_template/" + name)
    store.close()


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m bench archive", description=__doc__)
    parser.add_argument("--stores", default="sqlite,opensearch")
    parser.add_argument("--n", default="5000,20000", help="comma-separated record counts")
    parser.add_argument("--opensearch-url", default=os.environ.get(
        "OPENSEARCH_URL", "http://127.0.0.1:%s" % os.environ.get("OPENSEARCH_PORT", "9250")))
    args = parser.parse_args(argv)
    counts = [int(x) for x in args.n.split(",") if x]
    ok = True
    print("%-11s %8s %12s %14s %10s %9s  %s" % ("store", "N", "results/s", "archive CPU/s",
                                                 "peak MB", "failures", "target"))
    for store in [s for s in args.stores.split(",") if s]:
        tmp = None
        prefix = None
        peaks = []
        for n in counts:
            if store == "sqlite":
                tmp = tempfile.mkdtemp(prefix="jumbo-bench-")
                data = {"_url": "sqlite:///%s/bench.db" % tmp}
            elif store == "opensearch":
                url = _opensearch(args.opensearch_url.rstrip("/"))
                prefix = "bench%s_" % uuid.uuid4().hex[:6]
                data = {"_url": "%s/?prefix=%s" % (url, prefix)}
            else:
                sys.stderr.write("unknown store %s\n" % store)
                return 2
            try:
                rate, peak, failures, cpu = run_once(n, data)
            finally:
                if tmp:
                    shutil.rmtree(tmp, ignore_errors=True)
                if prefix:
                    _cleanup_opensearch(args.opensearch_url.rstrip("/"), prefix)
            peaks.append(peak or 0)
            met = rate >= TARGETS[store] and failures == 0
            ok = ok and met
            print("%-11s %8d %12.0f %14s %10.1f %9d  >= %d/s %s" % (
                store, n, rate, "%.0f" % (n / cpu) if cpu else "-", (peak or 0) / 1024.0,
                failures, TARGETS[store], "ok" if met else "MISSED"))
            sys.stdout.flush()
        if len(peaks) > 1 and min(peaks) > 0:
            growth = max(peaks) / float(min(peaks))
            print("%-11s memory growth across N: x%.2f (%s)" % (
                store, growth, "flat" if growth < 1.3 else "NOT flat"))
            ok = ok and growth < 1.3
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
