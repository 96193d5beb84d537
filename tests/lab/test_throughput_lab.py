"""The throughput phase with real iperf3 on both ends of the namespace lab.

The dest runs `python -m jumbo.tool.throughput serve` and the source `... client`, both as the
unprivileged user `jumbotest`, each inside its namespace. Runs are short (2 s, one round).
Host links have segmentation offload off (the lab default), so per-packet cost dominates
and jumbo frames must win on a clean jumbo path.
"""

import json
import os
import signal
import time


from lab_support import ROOT, needs_lab
from jumbo.core.mtu import MSS_TOLERANCE
from jumbo.tool import throughput as tp

PY = os.path.join(ROOT, ".venv", "bin", "python")


def _spec(**extra):
    phase = {"duration": "PT2S", "omit": "PT0S", "rounds": 1}
    phase.update(extra)
    return {"dest": "dst", "throughput": phase}


def _start_server(lab, spec, port, deadline, version=4):
    return lab.popen("dst", [PY, "-m", "jumbo.tool.throughput", "serve", "--spec", json.dumps(spec),
                             "--port", str(port), "--deadline", str(deadline),
                             "--bind", lab.address("dst", version)], user="jumbotest")


def _client_argv(lab, spec, port, deadline, path_mtu, version=4):
    argv = [PY, "-m", "jumbo.tool.throughput", "client", "--spec", json.dumps(spec),
            "--port", str(port), "--deadline", str(deadline), "--dest",
            lab.address("dst", version), "--ip-version", str(version)]
    if path_mtu:
        argv += ["--path-mtu", str(path_mtu)]
    return argv


def _phase(lab, spec, path_mtu, version=4):
    """Run both participants; (client result, server result, elapsed seconds)."""
    port = tp.choose_port()
    started = time.time()
    deadline = started + tp.duration(spec)
    server = _start_server(lab, spec, port, deadline, version)
    done = lab.run("src", _client_argv(lab, spec, port, deadline, path_mtu, version),
                   user="jumbotest", timeout=tp.duration(spec) + 10)
    out, err = server.communicate(timeout=tp.duration(spec) + 10)
    elapsed = time.time() - started
    assert done.stderr == "" and "Traceback" not in err
    return json.loads(done.stdout), json.loads(out), elapsed


def _valid(result):
    from jumbo.core import validate
    ok, problem = validate.check_result({"schema": 1, "succeeded": True, "throughput": result})
    assert ok, problem


def _mss_ok(run):
    return run["mss"] - MSS_TOLERANCE <= run["observed-mss"] <= run["mss"]


@needs_lab
def test_clean_jumbo_jumbo_wins_and_each_leg_ran_at_its_size(lab_factory):
    lab = lab_factory("clean-jumbo")
    truth = lab.truth("src", "dst")
    result, served, _ = _phase(lab, _spec(), truth["path-mtu"])
    runs = result["runs"]
    assert [r["mtu"] for r in runs] == [1500, 9000, 9000, 1500]
    assert all(r["succeeded"] for r in runs), runs
    assert all(_mss_ok(r) for r in runs)
    # The kernel's own numbers: timestamps take 12 bytes off the clamped MSS.
    assert [r["observed-mss"] for r in runs] == [1448, 8948, 8948, 1448]
    assert all(r["pmtu"] == truth["path-mtu"] for r in runs)
    assert result["jumbo-mtu"] == 9000 and result["skipped"] is None
    assert result["gain"] > 1
    # The verdict also weighs the spread of two runs per size (large on a loaded machine).
    if result["gain"] - max(2 * result["gain-noise"], 0.05) > 1:
        assert result["verdict"] == "jumbo-faster"
    else:
        assert result["verdict"] == "no-difference"
    assert result["standard"]["n"] == 2 and result["jumbo"]["n"] == 2
    assert result["gain-noise"] is not None
    assert result["mathis"]["standard"]["mss"] == 1448
    assert result["mathis"]["jumbo"]["mss"] == 8948
    assert all(r["rtt"] and r["rtt"] < 0.05 for r in runs)
    assert all(r["cpu-sender"] is not None and r["cpu-receiver"] is not None for r in runs)
    assert served["succeeded"] and served["stopped"] == "last-leg" and served["served"] == 4
    _valid(result)


@needs_lab
def test_ipv6_both_directions_ab(lab_factory):
    lab = lab_factory("clean-jumbo")
    spec = _spec(order="ab", direction="both")
    result, served, _ = _phase(lab, spec, 9000, version=6)
    runs = result["runs"]
    assert [(r["mtu"], r["direction"]) for r in runs] == [
        (1500, "forward"), (1500, "reverse"), (9000, "forward"), (9000, "reverse")]
    assert all(r["succeeded"] for r in runs), runs
    # IPv6: MSS = MTU - 60, minus the 12 bytes of timestamps; reverse legs are proven by
    # the server's (sender's) windows.
    assert [r["observed-mss"] for r in runs] == [1428, 1428, 8928, 8928]
    assert result["gain"] > 1
    assert set(result["by-direction"]) == {"forward", "reverse"}
    assert served["served"] == 4


@needs_lab
def test_all_standard_skips_the_jumbo_leg(lab_factory):
    lab = lab_factory("all-standard")
    truth = lab.truth("src", "dst")
    result, served, _ = _phase(lab, _spec(), truth["path-mtu"])
    assert truth["path-mtu"] == 1500
    assert result["verdict"] == "skipped" and "1500" in result["skipped"]
    assert result["jumbo-mtu"] is None and result["gain"] is None
    assert [r["mtu"] for r in result["runs"]] == [1500, 1500]
    assert all(r["succeeded"] and r["observed-mss"] == 1448 for r in result["runs"])
    assert all(r["pmtu"] == 1500 for r in result["runs"])
    assert served["stopped"] == "last-leg"
    _valid(result)


@needs_lab
def test_fooled_probes_on_a_blackhole_the_jumbo_legs_stall_and_nothing_hangs(lab_factory):
    lab = lab_factory("vxlan-blackhole")
    truth = lab.truth("src", "dst")
    assert truth["pmtud"] == "blackhole"
    spec = _spec()
    # The probes were fooled: they claim 9000.
    result, served, elapsed = _phase(lab, spec, 9000)
    assert elapsed < tp.duration(spec)
    runs = result["runs"]
    assert result["verdict"] == "blackhole" == truth["pmtud"]
    jumbo = [r for r in runs if r["size"] == "jumbo"]
    standard = [r for r in runs if r["size"] == "standard"]
    assert all(r["stalled"] and not r["succeeded"] and "stalled" in r["error"] for r in jumbo)
    # The stalled flows did use the full size (and the kernel never learnt better).
    assert all(r["observed-mss"] == 8948 and r["pmtu"] == 9000 for r in jumbo)
    assert all(r["succeeded"] and r["throughput"] > 1e8 for r in standard)
    assert served["succeeded"] and served["stopped"] == "last-leg"
    _valid(result)


@needs_lab
def test_honest_path_mtu_below_9000_is_used_by_the_jumbo_leg(lab_factory):
    lab = lab_factory("vxlan-blackhole")
    truth = lab.truth("src", "dst")
    result, _, _ = _phase(lab, _spec(order="ab"), truth["path-mtu"])
    assert result["jumbo-mtu"] == 8950 and "8950" in " ".join(result["notes"])
    jumbo = [r for r in result["runs"] if r["size"] == "jumbo"]
    assert jumbo[0]["mss"] == 8910 and jumbo[0]["observed-mss"] == 8898
    assert jumbo[0]["succeeded"] and result["gain"] > 1


def _iperf3_child(port, leg):
    """PID of the iperf3 client this test's client started for `leg` (found by its port)."""
    marker = "%s leg %d of" % (tp.EXTRA_TAG, leg)
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as handle:
                argv = handle.read().decode("utf-8", "replace").split("\0")
        except OSError:
            continue
        if argv and argv[0].endswith("iperf3") and "-c" in argv and str(port) in argv \
                and any(a.startswith(marker) for a in argv):
            return int(pid)
    return None


def _start_phase(lab):
    """_spec()'s phase with both participants started, the client in the background:
    (spec, port, time started, server, client)."""
    spec = _spec()
    port = tp.choose_port()
    started = time.time()
    deadline = started + tp.duration(spec)
    server = _start_server(lab, spec, port, deadline)
    client = lab.popen("src", _client_argv(lab, spec, port, deadline, 9000), user="jumbotest")
    return spec, port, started, server, client


def _client_result(client, spec):
    out, _ = client.communicate(timeout=tp.duration(spec))
    return json.loads(out)


@needs_lab
def test_killed_client_keeps_the_runs_that_completed(lab_factory):
    lab = lab_factory("clean-jumbo")
    spec, port, started, server, client = _start_phase(lab)
    pid = []
    assert lab.wait_for(lambda: pid.append(_iperf3_child(port, 1)) or pid[-1], timeout=15)
    time.sleep(0.5)
    os.kill(pid[-1], signal.SIGKILL)  # the iperf3 we (indirectly) started, by its PID
    result = _client_result(client, spec)
    runs = result["runs"]
    assert len(runs) == 4
    assert not runs[1]["succeeded"] and runs[1]["error"]
    assert runs[0]["succeeded"] and runs[2]["succeeded"] and runs[3]["succeeded"]
    assert result["standard"]["n"] == 2 and result["jumbo"]["n"] == 1
    server.communicate(timeout=tp.duration(spec))
    assert time.time() - started < tp.duration(spec)


@needs_lab
def test_dest_failing_mid_run_fails_the_later_legs_only(lab_factory):
    lab = lab_factory("clean-jumbo")
    spec, port, started, server, client = _start_phase(lab)
    assert lab.wait_for(lambda: _iperf3_child(port, 2), timeout=20)
    os.killpg(server.pid, signal.SIGKILL)  # the whole dest participant goes away
    server.wait(timeout=5)
    result = _client_result(client, spec)
    runs = result["runs"]
    assert runs[0]["succeeded"] and runs[1]["succeeded"]
    assert not runs[3]["succeeded"] and runs[3]["error"]
    assert result["verdict"] != "blackhole"  # a dead server is not a black hole
    _valid(result)
    assert time.time() - started < tp.duration(spec)


@needs_lab
def test_partial_ecmp_blackhole_is_caught_by_stalled_streams(lab_factory):
    # Two equal-cost members, one narrower and black-holed: the probes may well report 9000.
    # Eight parallel streams hash onto both members, so every jumbo leg has stalled streams
    # (all eight on the good member: 1 in 256) while the others flow.
    lab = lab_factory("ecmp-partial-blackhole")
    truth = lab.truth("src", "dst")
    assert truth["partial"] and truth["pmtud"] == "blackhole"
    spec = _spec(order="ab", parallel=8)
    result, _, elapsed = _phase(lab, spec, 9000)
    assert elapsed < tp.duration(spec)
    standard, jumbo = result["runs"]
    assert standard["succeeded"] and standard["stalled-streams"] == 0
    assert jumbo["stalled"] and 0 < jumbo["stalled-streams"] < 8
    assert result["verdict"] == "blackhole"
    _valid(result)


def _return_path_behind_a_router():
    """src->dst through r1, all 9000; dst->src through r2 and r3, whose link is 1500 with
    PTB sent (the mesh's bnl): dst's own interfaces are 9000, so it learns the way back is
    1500 only from a PTB, as a real receiver on an asymmetric path does."""
    from lab.topology import Node, Topology
    nodes = [Node("src"), Node("r1", router=True), Node("r2", router=True),
             Node("r3", router=True), Node("dst")]
    links = [("src", "r1", 9000), ("r1", "dst", 9000), ("dst", "r2", 9000), ("r2", "r3", 1500),
             ("r3", "src", 9000)]
    return Topology("asymmetric-behind-router", nodes, links,
                    routes={("dst", "src"): ["r2"], ("r2", "src"): ["r3"]},
                    description="forward 9000; the way back 1500 one router away")


@needs_lab
def test_a_receiver_that_learnt_its_way_back_is_1500_caps_the_jumbo_legs(lab_factory):
    """Linux advertises the MSS of the route it answers on. Until dst has a path MTU for src
    the jumbo legs run at 8948; once a PTB taught it the way back is 1500 (any big packet it
    sends to src: the mesh's own reverse probes do), it advertises 1460 and the jumbo legs
    run at 1448 although the forward path carries 9000: the verdict says so, not "failed"."""
    lab = lab_factory(_return_path_behind_a_router())
    assert lab.truth("src", "dst")["path-mtu"] == 9000
    assert lab.truth("dst", "src")["path-mtu"] == 1500
    result, _, _ = _phase(lab, _spec(), 9000)
    assert [r["observed-mss"] for r in result["runs"]] == [1448, 8948, 8948, 1448], result
    assert result["verdict"] in ("jumbo-faster", "no-difference"), result
    # dst learns its way back: a PTB from r2 for a 8000-byte ping.
    lab.run("dst", ["ping", "-c", "2", "-i", "0.2", "-W", "1", "-M", "want", "-s", "8000",
                    lab.address("src")], check=False)
    route = lab.run("dst", ["ip", "route", "get", lab.address("src")]).stdout
    assert "mtu 1500" in route, route
    result, _, _ = _phase(lab, _spec(), 9000)
    runs = result["runs"]
    assert [r["observed-mss"] for r in runs] == [1448, 1448, 1448, 1448], runs
    assert [r["pmtu"] for r in runs] == [9000] * 4
    assert [r["succeeded"] for r in runs] == [True, False, False, True]
    assert result["verdict"] == "mss-capped" and result["gain"] is None
    assert result["standard"]["n"] == 2 and result["jumbo"]["n"] == 0
    assert result["notes"][0].startswith("jumbo legs ran at MSS 1448 while their sockets' path "
                                         "MTU was 9000")
    _valid(result)
