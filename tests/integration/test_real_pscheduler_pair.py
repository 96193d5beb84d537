"""The exclusive jumbo-throughput test under the real pScheduler, alone on the nodes (after
test_real_pscheduler.py's tasks have ended, so no other exclusive run competes for its slot).

Truth (lab/real_pscheduler/nodes.sh): A->B path MTU 8950 with a black hole at hop 1, so the
jumbo legs must run at 8950, not at A's 9000, and every leg must flow; iperf3 runs on both
nodes, started by pScheduler's runners as the pscheduler user.
"""

import json
import os
import time

from jumbo.archive import record as records
from real_pscheduler import ADDR, run_urls

DEST4 = ADDR["b"]
PATH_MTU = 8950


def test_jumbo_throughput_runs_end_to_end_and_is_archived(nodes):
    directory = os.path.join(nodes.rps, "archive-pair")
    os.makedirs(directory, exist_ok=True)
    os.chmod(directory, 0o777)
    for name in os.listdir(directory):
        os.unlink(os.path.join(directory, name))
    url = "sqlite:///" + os.path.join(directory, "jumbo.db")
    archive = json.dumps({"archiver": "jumbo", "data": {"_url": url}})
    started = time.monotonic()
    done = nodes.cli("a", ["task", "--archive", archive, "jumbo-throughput", "--dest", DEST4,
                           "--duration", "2", "--omit", "0"], timeout=300)
    assert done.returncode == 0, (done.stdout, done.stderr)
    urls = run_urls(done.stdout)
    assert urls, done.stdout
    run = nodes.run(urls[0])
    assert run["state"] == "finished", run
    result = run["result-merged"]
    assert result["succeeded"] is True, result
    # The path MTU is measured first: the jumbo legs use the path's 8950, never stall.
    assert (result["path-mtu"], result["pmtud"], result["jumbo-mtu"]) == (
        PATH_MTU, "blackhole", PATH_MTU), result
    assert [leg["mtu"] for leg in result["runs"]] == [1500, PATH_MTU, PATH_MTU, 1500], result
    for leg in result["runs"]:
        assert leg["succeeded"] and not leg["stalled"], leg
        # the MSS seen on the wire, not iperf3's echo of -M
        assert leg["mss"] - 40 <= leg["observed-mss"] <= leg["mss"], leg
    assert result["gain"] is not None and result["verdict"] in (
        "jumbo-faster", "jumbo-slower", "no-difference"), result
    assert result["mathis"]["standard"]["ceiling"] > 0, result["mathis"]
    text = done.stdout.split("Waiting for result...\n", 1)[1]
    assert "Mathis ceiling:" in text and "standard -" not in text, text
    # exclusive, and a slot of its legs plus a small fixed overhead
    status, task = nodes.api("a", urls[0].rsplit("/runs/", 1)[0] + "?detail=true")
    assert status == 200, task
    assert task["detail"]["exclusive"] is True, task["detail"]
    assert time.monotonic() - started < 240
    # archived: the adoption record of this run, with its gain
    from jumbo.archive.stores import open_store
    store = open_store(url)
    try:
        deadline = time.monotonic() + 60
        found = None
        while time.monotonic() < deadline and not found:
            found = store.get(records.make_id(urls[0]))
            if not found:
                time.sleep(1)
    finally:
        store.close()
    assert found, "run %s never reached the archive" % urls[0]
    assert found["test_type"] == "jumbo-throughput" and found["gain"] == result["gain"]
    assert found["path_mtu"] == PATH_MTU
