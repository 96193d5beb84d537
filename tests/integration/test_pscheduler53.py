"""The suite under a real upstream pScheduler of the 5.3 development line (perfsonar/
pscheduler issue-1526 snapshot, the new plugin contract), built by lab/real_pscheduler/
node53.sh: the plugins answer `enumerate` in 5.3's shape, the server's enumeration check
accepts them (they are enabled), and every task kind returns the lab's ground truth through
the operator's CLI:
    A (198.18.200.1, fd00:200::1, MTU 9000) -- r1 -- B (198.18.201.2, fd00:201::2, MTU 8950)
    path MTU A->B 8950, IPv4 and IPv6; black hole at hop 1 (r1 sends no frag-needed / PTB);
    B->A: B's own interface is 8950.
Every measuring task is submitted at the start of the module, each starting LEAD_TIME out, and
each test waits for its own. On the shared two cores pScheduler's scheduler took up to 54 s to
place a run after its task was accepted, and a run placed only seconds before its start is
`Missed` by the runner (seen with 3 s and 7 s): a run starting 120 s out is placed in time."""

import datetime
import json
import os
import time

import pytest

from jumbo.archive import record as records
from jumbo.archive.stores import open_store
from real_pscheduler import ADDR, ADDR6, run_urls

DEST4, DEST6 = ADDR["b"], ADDR6["b"]
HOP1_4 = "198.18.200.254"
PATH_MTU = 8950
LEAD_TIME = 120  # seconds between a submission and its run's start (see the module doc)


@pytest.fixture(scope="module")
def store_url(nodes53):
    directory = os.path.join(nodes53.rps, "archive")
    os.makedirs(directory, exist_ok=True)
    os.chmod(directory, 0o777)
    for name in os.listdir(directory):  # a fresh store: only this session's runs in it
        os.unlink(os.path.join(directory, name))
    return "sqlite:///" + os.path.join(directory, "jumbo.db")


@pytest.fixture(scope="module")
def tasks(nodes53, store_url):
    started = {}
    archive = ["--archive", json.dumps({"archiver": "jumbo", "data": {"_url": store_url}})]

    def submit(name, args, tries=2):
        """Submit, and wait until pScheduler has placed the run. A submission refused with
        "Failed can-run" is made once more: pScheduler gives a tool's can-run 5 s (its SQL
        tool_can_run), which the suite's can-run (3-5 s at load 38 on two cores) overran
        once; a refusal for any other reason stands, and is the test's failure."""
        start = datetime.datetime.utcnow() + datetime.timedelta(seconds=LEAD_TIME)
        cli = started[name] = nodes53.cli_background(
            "a", ["task"] + archive + ["--start", start.strftime("%Y-%m-%dT%H:%M:%SZ")] + args)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and cli.proc.poll() is None:
            if "Next scheduled run" in "".join(cli.out):
                return
            time.sleep(0.5)
        if tries > 1 and "Failed can-run" in "".join(cli.out):
            cli.stop()
            submit(name, args, tries - 1)

    submit("single", ["pmtu", "--dest", DEST4, "--hops"])
    submit("reflector", ["pmtu", "--dest", DEST4, "--reflector"])
    submit("reverse", ["pmtu", "--dest", DEST6, "--reverse"])
    submit("pair", ["jumbo-throughput", "--dest", DEST4, "--duration", "2", "--omit", "0"])
    try:
        yield started
    finally:
        for cli in started.values():
            cli.stop()


def result_of(nodes53, tasks, name, timeout=480):
    """(run URL, merged result) once the task's CLI has ended; the run must have finished."""
    status, text = tasks[name].wait(timeout)
    assert status == 0, text
    urls = run_urls(text)
    assert urls, text
    run = nodes53.run(urls[0])
    merged = run.get("result-merged") or {}
    assert run["state"] == "finished", (run["state"], merged.get("error"), merged.get("diags"),
                                        text)
    return urls[0], run["result-merged"]


def archived(url, run_url):
    """The adoption record of the run, once the archiver has stored it."""
    store = open_store(url)
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            found = store.get(records.make_id(run_url))
            if found:
                return found
            time.sleep(1)
    finally:
        store.close()
    raise AssertionError("run %s never reached the archive" % run_url)


def test_the_suites_plugins_are_enabled_in_the_5_3_shape(nodes53):
    listed = {}
    for kind in ("tests", "tools", "archivers"):
        done = nodes53.cli("a", ["plugins", kind], timeout=120)
        assert done.returncode == 0, done.stderr
        listed[kind] = [line.split()[0] for line in done.stdout.splitlines() if line.strip()]
    assert {"pmtu", "jumbo-throughput"} <= set(listed["tests"]), listed
    assert "jumbocheck" in listed["tools"] and "jumbo" in listed["archivers"], listed
    # What the server stored: 5.3's shape (its trigger refuses an invalid one: not listed)
    for path, schema in (("/tests/pmtu", 2), ("/tests/jumbo-throughput", 2),
                         ("/tools/jumbocheck", 1), ("/archivers/jumbo", 2)):
        status, enumeration = nodes53.api("a", path)
        assert status == 200, (path, enumeration)
        assert enumeration["schema"] == schema and enumeration["label"], enumeration
        if path.startswith("/tests/"):
            versions = enumeration["spec"]["jsonschema"]["versions"]
            assert versions[0] is None and versions[1]["required"] == ["dest"], versions


def test_a_spec_the_suite_refuses_is_refused_at_submit(nodes53):
    done = nodes53.cli("a", ["task", "pmtu", "--dest", DEST4, "--flows", "65"], timeout=120)
    assert done.returncode != 0, done.stdout
    assert "/flows" in done.stdout + done.stderr, (done.stdout, done.stderr)


def test_single_ended_pmtu_ipv4_exact_and_archived(nodes53, tasks, store_url):
    run_url, result = result_of(nodes53, tasks, "single")
    assert result["succeeded"] is True, result
    assert (result["path-mtu"], result["pmtud"], result["ip-version"]) == (PATH_MTU, "blackhole", 4)
    assert result["blackhole"] == {"ttl": 1, "ip": HOP1_4, "size": PATH_MTU + 1}, result
    assert [(h["ttl"], h["ip"], h["mtu"]) for h in result["hops"]] == [
        (1, HOP1_4, 9000), (2, DEST4, PATH_MTU)], result["hops"]
    rec = archived(store_url, run_url)
    assert (rec["path_mtu"], rec["pmtud"], rec["blackhole_ttl"]) == (PATH_MTU, "blackhole", 1)


def test_pmtu_through_the_dest_reflector(nodes53, tasks):
    _url, result = result_of(nodes53, tasks, "reflector")
    assert result["succeeded"] is True and result["method"] == "reflector", result
    assert (result["path-mtu"], result["pmtud"]) == (PATH_MTU, "blackhole"), result


def test_pmtu_reverse_ipv6(nodes53, tasks):
    _url, result = result_of(nodes53, tasks, "reverse")
    assert result["succeeded"] is True, result
    assert (result["path-mtu"], result["pmtud"], result["ip-version"]) == (PATH_MTU, "blackhole", 6)
    assert (result["reverse-path-mtu"], result["reverse-pmtud"]) == (PATH_MTU, "not-needed"), result


def test_jumbo_throughput_at_the_path_mtu_and_archived(nodes53, tasks, store_url):
    run_url, result = result_of(nodes53, tasks, "pair")
    assert result["succeeded"] is True, result
    assert (result["path-mtu"], result["jumbo-mtu"]) == (PATH_MTU, PATH_MTU), result
    assert [leg["mtu"] for leg in result["runs"]] == [1500, PATH_MTU, PATH_MTU, 1500], result
    for leg in result["runs"]:
        assert leg["succeeded"] and not leg["stalled"], leg
        assert leg["mss"] - 40 <= leg["observed-mss"] <= leg["mss"], leg
    rec = archived(store_url, run_url)
    assert rec["test_type"] == "jumbo-throughput" and rec["path_mtu"] == PATH_MTU


def test_what_the_snapshot_cannot_build_is_named(nodes53):
    """Upstream's own tests and archivers do not build from this snapshot (its plugin-test.make
    wants a result-jsonschema.json no test has yet: "incomplete development on result
    specs"; plugin-archive.make runs pscheduler-build-enumeration, a package outside the
    snapshot). node53.sh names each; the suite's plugins do not depend on either."""
    with open(os.path.join(nodes53.rps, "upstream-unbuilt")) as handle:
        unbuilt = dict(line.split(": ", 1) for line in handle.read().splitlines())
    for test in ("test rtt", "test mtu", "test throughput"):
        assert "result-jsonschema.json" in unbuilt.get(test, ""), unbuilt
    assert "pscheduler-build-enumeration" in unbuilt.get("archiver syslog", ""), unbuilt
