"""The suite under a real upstream pScheduler 5.2.5 (tests/integration/conftest.py), through its
CLI and REST API, against the lab's ground truth (lab/real_pscheduler/nodes.sh):

    A (198.18.200.1, fd00:200::1, MTU 9000) -- r1 -- B (198.18.201.2, fd00:201::2, MTU 8950)
    path MTU A->B 8950, IPv4 and IPv6; black hole at hop 1 (r1 sends no frag-needed / PTB);
    B->A: B's own interface is 8950; 198.18.202.0/24 is routed to a blackhole (never answers).

Every measuring task is submitted at the start of the module (pmtu is a `background` test, so
they all run side by side, as on a mesh node) and each test then waits for its own; the whole
module takes about as long as its longest task, the repeating pair of the coexistence test.
"""

import datetime
import json
import os
import time
import warnings

import pytest

from jumbo.archive import record as records
from lab import runner_log
from real_pscheduler import ADDR, ADDR6, NETNS, run_urls

DEST4, DEST6 = ADDR["b"], ADDR6["b"]
HOP1_4, HOP1_6 = "198.18.200.254", "fd00:200::fe"
SILENT = "198.18.202.1"
PATH_MTU = 8950
# The repeating pair: "several minutes" of a repeating pmtu beside a repeating upstream
# throughput test to the same host. Each repeats every minute; pScheduler's conflict drop
# (docs/operator.md, known issues) lost 6 of 7 throughput runs while pmtu was `exclusive`.
REPEAT, REPEATS = "PT1M", 4


def jumbo_archive(url):
    return json.dumps({"archiver": "jumbo", "schema": 2, "runs": "all", "data": {"_url": url}})


@pytest.fixture(scope="module")
def sqlite_url(nodes):
    directory = os.path.join(nodes.rps, "archive")
    os.makedirs(directory, exist_ok=True)
    os.chmod(directory, 0o777)
    for name in os.listdir(directory):  # a fresh store: only this session's runs in it
        os.unlink(os.path.join(directory, name))
    return "sqlite:///" + os.path.join(directory, "jumbo.db")


@pytest.fixture(scope="module")
def opensearch_prefix():
    return "rps%d_" % os.getpid()


@pytest.fixture(scope="module")
def tasks(nodes, sqlite_url, lab_opensearch, opensearch_prefix):
    """Every measuring task, submitted now and watched by its own CLI to its end."""
    started = {}

    def submit(name, args):
        """Submit, and wait until pScheduler has scheduled the first run: one submission at a
        time. A run that starts right after it was scheduled can start on the dest before
        the lead has sent it the full participant data (pScheduler's runner: "Got NULL
        part_data_full"; docs/operator.md, known issues), which a burst of submissions on two busy
        cores provokes; so tasks go in one by one, each starting 20 s out (`later`)."""
        cli = started[name] = nodes.cli_background("a", args)
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and cli.proc.poll() is None:
            if "Next scheduled run" in "".join(cli.out):
                return
            time.sleep(0.5)

    def later():
        start = datetime.datetime.utcnow() + datetime.timedelta(seconds=20)
        return ["--start", start.strftime("%Y-%m-%dT%H:%M:%SZ")]

    repeat = ["--repeat", REPEAT, "--max-runs", str(REPEATS)]
    submit("repeating-throughput",
           ["task"] + later() + repeat + ["throughput", "--dest", DEST4])
    # --timeout 0.25: an 18 s slot, so a run fits in each minute (the default spec's slot is
    # 74 s until issue 12 shortens it; a slot longer than the repeat halves the run rate)
    submit("repeating-pmtu",
           ["task"] + later() + repeat + ["pmtu", "--dest", DEST4, "--timeout", "0.25"])
    archive = ["--archive", jumbo_archive(sqlite_url)]
    submit("v4", ["task"] + archive + later() + ["pmtu", "--dest", DEST4, "--reverse", "--hops"])
    submit("v6", ["task"] + archive + later() + ["pmtu", "--dest", DEST6, "--reverse", "--hops"])
    submit("silent", ["task"] + archive + ["pmtu", "--dest", SILENT])
    # the plain operator's task, archived to the real OpenSearch
    opensearch = ["--archive", jumbo_archive("%s?prefix=%s" % (lab_opensearch, opensearch_prefix))]
    submit("plain", ["task"] + opensearch + ["pmtu", "--dest", DEST4])
    # The exclusive jumbo-throughput test runs in test_real_pscheduler_pair.py, after these:
    # beside the repeating upstream throughput it could lose runs to pScheduler's own
    # exclusive-slot conflict drop (docs/operator.md, known issues), which is not what is tested here.
    try:
        yield started
    finally:
        for cli in started.values():
            cli.stop()


def finished(tasks, name, timeout=420):
    """(the result as the CLI printed it, run URLs) once the task's CLI has ended."""
    status, text = tasks[name].wait(timeout)
    assert status == 0, text
    urls = run_urls(text)
    assert urls, text
    marker = "Waiting for result...\n"
    assert marker in text, text
    return text.split(marker, 1)[1].lstrip("\n"), urls


def merged(nodes, run_url, state="finished"):
    run = nodes.run(run_url)
    assert run["state"] == state, run
    return run, run["result-merged"]


def measured(nodes, tasks, name, args):
    """(text, run URLs, merged result) of a --reverse task. When the run hit pScheduler's own
    participant-data race (docs/operator.md, known issues: the lead's run started without the dest's
    participant data, so no reverse phase could run), the same task is submitted once more,
    alone, and that run is the one judged; any other failure is judged as it is."""
    text, urls = finished(tasks, name)
    _run, result = merged(nodes, urls[0])
    if result.get("reverse-path-mtu") is None and \
            "no participant data from the dest participant" in (result.get("diags") or ""):
        done = nodes.cli("a", ["task"] + args, timeout=300)
        assert done.returncode == 0, (done.stdout, done.stderr)
        urls = run_urls(done.stdout)
        assert urls, done.stdout
        text = done.stdout.split("Waiting for result...\n", 1)[1].lstrip("\n")
        _run, result = merged(nodes, urls[0])
    return text, urls, result


def stored(sqlite_url, run_url):
    from jumbo.archive.stores import open_store
    deadline = time.monotonic() + 60
    store = open_store(sqlite_url)
    try:
        while time.monotonic() < deadline:
            found = store.get(records.make_id(run_url))
            if found:
                return found
            time.sleep(1)
    finally:
        store.close()
    raise AssertionError("run %s never reached the SQLite archive" % run_url)


# -- refused at submit, through the CLI and the API --------------------------------------------

@pytest.mark.parametrize("args, message", [
    (["--dest", DEST4, "--min-mtu", "50000"], "At /min-mtu: 50000 is larger than target-mtu 9000"),
    (["--dest", DEST4, "--flows", "0"], "/flows"),
    (["--dest", DEST4, "--ip-version", "6"], "At /dest: 198.18.201.2 is an IPv4 address"),
    (["--dest", "fe80::1%a0"], "At /dest: 'fe80::1%a0' is a scoped (link-local) IPv6 address"),
    (["--dest", "bad_host!"], "At /dest: 'bad_host!' is not a valid host name"),
])
def test_bad_specs_are_refused_at_submit(nodes, tasks, args, message):
    done = nodes.cli("a", ["task", "pmtu"] + args, timeout=60)
    assert done.returncode != 0, done.stdout
    assert message in done.stdout + done.stderr, (done.stdout, done.stderr)
    assert "Waiting for result" not in done.stdout


@pytest.mark.parametrize("data, message", [
    ({"_url": "ftp://archive"}, "At /_url: unknown store 'ftp'"),
    ({"_url": "https://archive:9200", "_auth": {"username": "w"}}, "'password' is a required"),
    ({"_url": "sqlite:////tmp/x.db", "timeout": "PT5M"}, "/timeout"),
    ({"_url": "sqlite:////tmp/x.db", "colour": "blue"}, "'colour' was unexpected"),
])
def test_bad_archive_data_is_refused_at_submit(nodes, tasks, data, message):
    archive = json.dumps({"archiver": "jumbo", "data": data})
    done = nodes.cli("a", ["task", "--archive", archive, "pmtu", "--dest", DEST4], timeout=60)
    assert done.returncode != 0, done.stdout
    assert message in done.stdout + done.stderr, (done.stdout, done.stderr)


def test_the_api_refuses_a_bad_spec_with_the_plugins_message(nodes, tasks):
    task = {"schema": 1, "test": {"type": "pmtu", "spec": {"schema": 1, "dest": DEST4,
                                                           "flows": 65}},
            "schedule": {}}
    status, answer = nodes.api("a", "/tasks", method="POST", body=task)
    assert status == 400, (status, answer)
    assert "/flows" in str(answer), answer


# -- measuring through the real scheduler, runner and archiver ---------------------------------

def test_ipv4_reverse_hops_exact_and_archived(nodes, tasks, sqlite_url):
    text, urls, result = measured(nodes, tasks, "v4", [
        "--archive", jumbo_archive(sqlite_url), "pmtu", "--dest", DEST4, "--reverse", "--hops"])
    assert text.startswith("Path MTU 8950 < 9000: black hole between hop 1 (%s) and hop 2" % HOP1_4), text
    assert result["succeeded"] is True, result
    assert (result["path-mtu"], result["pmtud"], result["ip-version"]) == (PATH_MTU, "blackhole", 4)
    assert result["blackhole"] == {"ttl": 1, "ip": HOP1_4, "size": PATH_MTU + 1}, result
    # --hops: hop 1 forwards 9000 onto its 8950 link; the last hop is the dest
    assert result["hops"][0]["ttl"] == 1 and result["hops"][0]["ip"] == HOP1_4
    assert result["hops"][0]["mtu"] == 9000, result["hops"]
    assert result["hops"][-1]["ip"] == DEST4, result["hops"]
    # --reverse: nothing larger than B's own 8950 leaves B
    assert (result["reverse-path-mtu"], result["reverse-pmtud"]) == (PATH_MTU, "not-needed"), result
    rec = stored(sqlite_url, urls[0])
    assert (rec["path_mtu"], rec["pmtud"], rec["blackhole_ttl"], rec["blackhole_ip"]) == (
        PATH_MTU, "blackhole", 1, HOP1_4)
    assert (rec["source_ip"], rec["dest_ip"], rec["ip_version"]) == (ADDR["a"], DEST4, 4)
    assert rec["reverse_path_mtu"] == PATH_MTU and rec["jumbo"] is False
    assert rec["hops"][0] == {"ttl": 1, "ip": HOP1_4, "mtu": 9000}, rec["hops"]


def test_ipv6_reverse_hops_exact_and_archived_with_ipv6_addresses(nodes, tasks, sqlite_url):
    text, urls, result = measured(nodes, tasks, "v6", [
        "--archive", jumbo_archive(sqlite_url), "pmtu", "--dest", DEST6, "--reverse", "--hops"])
    assert text.startswith("Path MTU 8950 < 9000: black hole between hop 1 (%s) and hop 2" % HOP1_6), text
    assert (result["path-mtu"], result["pmtud"], result["ip-version"]) == (PATH_MTU, "blackhole", 6)
    assert result["blackhole"] == {"ttl": 1, "ip": HOP1_6, "size": PATH_MTU + 1}, result
    assert result["hops"][0]["ip"] == HOP1_6 and result["hops"][0]["mtu"] == 9000, result["hops"]
    assert result["hops"][-1]["ip"] == DEST6, result["hops"]
    assert (result["reverse-path-mtu"], result["reverse-pmtud"]) == (PATH_MTU, "not-needed"), result
    rec = stored(sqlite_url, urls[0])
    assert (rec["path_mtu"], rec["blackhole_ip"], rec["ip_version"]) == (PATH_MTU, HOP1_6, 6)
    assert rec["dest_ip"] == DEST6
    # No --source: the lead's name is its IPv4 address; the run measured from its IPv6 one,
    # which the result names (source-ip) and the record keeps (issue 23, R1: it was the IPv4
    # name with source_ip NULL, so the report mixed families).
    assert (rec["source"], rec["source_ip"]) == (ADDR6["a"], ADDR6["a"]), rec
    assert result["source-ip"] == ADDR6["a"], result


def test_a_dest_that_never_answers_fails_cleanly_and_is_archived(nodes, tasks, sqlite_url):
    text, urls = finished(tasks, "silent")
    assert "Run failed." in text, text
    run, result = merged(nodes, urls[0], state="failed")
    assert result["succeeded"] is False and SILENT in (result.get("error") or ""), result
    rec = stored(sqlite_url, urls[0])
    assert rec["succeeded"] is False and rec["dest"] == SILENT and rec["path_mtu"] is None
    assert rec["error"], rec


def test_without_hops_no_hop_table_and_milliseconds_archived_to_opensearch(
        nodes, tasks, lab_opensearch, opensearch_prefix):
    """The plain operator's task: text without a Hops table (the black-hole walk's sizes are
    not hop MTUs), elapsed in ms, and the record in the real OpenSearch with no hops."""
    prefix = opensearch_prefix
    text, urls = finished(tasks, "plain")
    assert text.startswith("Path MTU 8950 < 9000: black hole between hop 1 (%s) and hop 2" % HOP1_4), text
    assert "Hops:" not in text and "8951  " not in text, text
    run_url = urls[0]
    _run, result = merged(nodes, run_url)
    # ms below a second ("0.00 s" for a 3 ms run before); beside the other tasks a run may
    # take seconds (ICMP rate limits), then it stays in seconds
    elapsed = [line for line in text.splitlines() if line.startswith("Elapsed:")]
    if result["elapsed"] < 1:
        assert elapsed and elapsed[0].endswith(" ms") and " 0 ms" not in elapsed[0], elapsed
    else:
        assert elapsed == ["Elapsed:      %.2f s" % result["elapsed"]], elapsed
    assert result["hops"] == [] and result["blackhole"]["ttl"] == 1, result
    # The adoption record in jumbo_history, the Logstash-shaped document in pscheduler_pmtu.
    record = _search_until(nodes, lab_opensearch, "/%sjumbo_history/_search" % prefix,
                           {"query": {"term": {"jumbo.run_href": run_url}}})
    assert record["jumbo"]["path_mtu"] == PATH_MTU and record["jumbo"]["blackhole_ttl"] == 1
    assert record["jumbo"]["hops"] in ([], None), record["jumbo"]["hops"]
    doc = _search_until(nodes, lab_opensearch, "/%spscheduler_pmtu/_search" % prefix,
                        {"query": {"match_phrase": {"pscheduler.run_href": run_url}}})
    assert "jumbo" not in doc, doc
    assert doc["result"]["path-mtu"] == PATH_MTU and doc["result"]["pmtud"] == "blackhole"
    assert doc["test"]["type"] == "pmtu"


def _search_until(nodes, base, path, query, timeout=90):
    """The first hit's _source once the archiver's write is searchable."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        answer = _opensearch(nodes, base, "POST", path, query)
        hits = (answer.get("hits") or {}).get("hits") or []
        if hits:
            return hits[0]["_source"]
        time.sleep(2)
    raise AssertionError("nothing for %s at %s within %d s" % (query, path, timeout))


def _opensearch(nodes, base, method, path, body=None):
    import subprocess
    argv = ["ip", "netns", "exec", NETNS["a"], "curl", "-s", "-m", "30", "-X", method,
            "-H", "Content-Type: application/json", base + path]
    if body is not None:
        argv[-1:-1] = ["--data-binary", json.dumps(body)]
    done = subprocess.run(argv, stdout=subprocess.PIPE, universal_newlines=True, timeout=60)
    try:
        return json.loads(done.stdout)
    except ValueError:
        return {}


def test_repeating_pmtu_beside_repeating_throughput_every_run_executed(nodes, tasks):
    """pmtu is `background`: its runs never take or block the exclusive throughput slots, so
    over several minutes every run of both repeating tasks was scheduled and executed."""
    runs = {}
    for name in ("repeating-throughput", "repeating-pmtu"):
        _text, urls = finished(tasks, name, timeout=600)
        runs[name] = nodes.task_runs(urls[0].rsplit("/runs/", 1)[0])
    log = nodes.daemon_log("a", "runner")
    for name, found in runs.items():
        states = [r["state"] for r in found]
        assert len(found) == REPEATS, (name, states)
        missed = [r for r in found if r["state"] == "missed"]
        # The conflict drop shows as runs never placed, Non-Starter or Preempted; none may be.
        # A Missed run is pScheduler's runner losing a pending run, which has nothing to do
        # with two tasks sharing slots: it never took it (it only takes runs that start within
        # its refresh + run_start_margin: one can slip between two of its queries), or took it
        # and did not start it in time (CI 2026-11-29: its 15 s wait lasted 30 s, it took the
        # upstream throughput run 4 s before its start, and the run was Missed). At most one
        # per task, with no result, and only while its debug log shows it up and looping:
        # anything else fails with the log lines.
        assert states.count("finished") + len(missed) == REPEATS, (name, states)
        assert len(missed) <= 1, (name, states)
        for run in missed:
            start = records.parse_time(run["start-time"])
            seen = runner_log.before(log, start)
            assert runner_log.looping(log, start), (name, run["start-time"], seen)
            assert not run.get("result-merged"), (name, run)
            warnings.warn("%s: pScheduler's runner %s the run at %s (Missed); its log before: %s"
                          % (name, "never took" if runner_log.never_taken(log, start)
                             else "took but did not start", run["start-time"], seen))
        for run in found:
            if run["state"] == "finished":
                assert run["result-merged"]["succeeded"] is True, (name, run["result-merged"])
    for run in runs["repeating-pmtu"]:
        if run["state"] == "finished":
            assert run["result-merged"]["path-mtu"] == PATH_MTU, run["result-merged"]
    # The two tasks really were active side by side, over the same minutes.
    starts = dict((name, sorted(records.parse_time(r["start-time"]) for r in found))
                  for name, found in runs.items())
    pmtu, throughput = starts["repeating-pmtu"], starts["repeating-throughput"]
    assert pmtu[0] < throughput[-1] and throughput[0] < pmtu[-1], starts
    assert (max(pmtu[-1], throughput[-1]) - min(pmtu[0], throughput[0])).total_seconds() >= 150
