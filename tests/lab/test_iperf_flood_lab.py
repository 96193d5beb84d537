"""Issue 32, row 2: a peer without credentials floods the dest's authenticated `iperf3 -s`
during a jumbo-throughput slot (a real client in another lab host, r2: connect, 37 bytes (the
size of iperf3's cookie), close, over and over, bounded in count and time). The run's own legs
are still measured, the dest counts the refused connections, and what the dest reports (and
the archived result carries) stays small however many connections the peer made."""

import json

from lab_support import needs_lab
from test_iperf_auth_lab import PORT, _run_with_intruders, _task

# One burst of the flood: at most this many connections, for at most this long (the test
# repeats bursts until the runs end, 0.2 s apart).
BURST_CONNECTS = 400
BURST_SECONDS = 1.5
FLOOD = r"""
import json, socket, sys, time
address, port, count, seconds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
end = time.monotonic() + seconds
made = refused = 0
while made + refused < count and time.monotonic() < end:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.settimeout(0.5)
    try:
        sock.connect((address, port))
        sock.sendall(b"x" * 37)
        made += 1
    except OSError:
        refused += 1
        time.sleep(0.01)  # nothing listens yet (or any more): do not spin
    finally:
        sock.close()
print(json.dumps({"connected": made, "failed": refused}))
"""
# The server's report in the result: its legs, counts and at most a few other entries.
REPORT_BOUND = 8192


@needs_lab
def test_a_flooding_peer_is_counted_refused_and_does_not_grow_the_result(lab_factory):
    lab = lab_factory("clean-jumbo")
    test = _task(lab)
    address = lab.address("dst", 4)

    def flood(data):
        done = lab.run("r2", ["python3", "-c", FLOOD, address, str(PORT), str(BURST_CONNECTS),
                              str(BURST_SECONDS)], user="jumbotest", check=False, timeout=20)
        try:
            return json.loads(done.stdout)
        except ValueError:
            return {"connected": 0, "failed": 0, "error": done.stderr}

    lead, dest, merged, data, seen = _run_with_intruders(lab, test, {"flood": flood})
    connected = sum(burst["connected"] for burst in seen["flood"])
    # The flood reached the server many times while it listened.
    assert connected >= 200, seen["flood"]
    server = merged["server"]
    # Counted: every connection iperf3 reports and that is not a leg is refused (those it
    # turns away while a leg runs, "server is busy", iperf3 does not report at all).
    assert server["refused"] >= 10, {k: v for k, v in server.items() if k != "tests"}
    assert sum(server["refusals"].values()) == server["refused"], server["refusals"]
    assert len(server["refusals"]) <= 8
    # Bounded: the legs only (4 of them) and no entry of the flood.
    assert len(server["tests"]) == server["served"] + server["others"], server["tests"]
    assert server["others"] == 0 and all(t["leg"] is not None for t in server["tests"])
    assert len(json.dumps(server)) < REPORT_BOUND, len(json.dumps(server))
    # The run's own legs were measured.
    assert merged["succeeded"] is True, merged
    assert server["served"] >= 2 and server["stopped"] == "last-leg", server
    measured = [r for r in merged["runs"] if r["succeeded"]]
    assert {r["mtu"] for r in measured} == {1500, 9000}, merged["runs"]
