"""demo/mesh_real.py's options: `make demo-mesh` checks three rounds back to back by default
(issue 29's "three runs"), on the lab's shortened hourly schedule, and refuses what cannot be
a schedule; its memory figure counts shared pages once."""

import os

import pytest

from demo import mesh as demo_mesh
from demo import mesh_real
from lab import real_mesh


def test_defaults_are_three_rounds_on_a_five_minute_schedule():
    args = mesh_real.parse_args([])
    assert (args.rounds, args.repeat, args.slip) == (3, "PT5M", "PT4M")
    assert len(args.sites) == 5


@pytest.mark.parametrize("argv", [["--repeat", "P1Y"], ["--slip", "soon"], ["--repeat", "PT0S"],
                                  ["--slip", "P2D"], ["--rounds", "0"], ["--sites", "cern"]])
def test_what_cannot_be_a_schedule_is_refused_with_exit_2(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        mesh_real.parse_args(argv)
    assert exc.value.code == 2
    assert "error:" in capsys.readouterr().err


def test_memory_is_the_proportional_set_size():
    # This process's PSS never exceeds its RSS; for a forked child sharing the parent's pages
    # it is well below (the summed RSS counted shared pages once per process).
    pid = os.fork()
    if pid == 0:
        import time
        time.sleep(5)
        os._exit(0)
    try:
        with open("/proc/%d/status" % pid) as handle:
            rss = next(int(line.split()[1]) * 1024 for line in handle if line.startswith("VmRSS:"))
        assert 0 < mesh_real._memory(pid) < rss
    finally:
        os.kill(pid, 9)
        os.waitpid(pid, 0)


def test_steady_state_holds_every_round_of_its_time_and_waits_long_enough():
    args = mesh_real.parse_args(["--steady", "PT1H", "--with-throughput"])
    assert args.rounds == 12                      # PT1H of PT5M rounds, all checked
    assert args.timeout >= 3600 + 900
    assert (args.throughput_repeat, args.throughput_slip) == ("PT30M", "PT25M")
    assert mesh_real.parse_args(["--steady", "PT5M"]).rounds == 3  # never fewer than asked
    assert not mesh_real.parse_args([]).with_throughput


@pytest.mark.parametrize("argv", [["--steady", "an hour"], ["--throughput-repeat", "P2D"],
                                  ["--throughput-slip", "PT0S"]])
def test_a_steady_or_throughput_schedule_that_cannot_be_one_is_refused(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        mesh_real.parse_args(argv)
    assert exc.value.code == 2
    assert "--" + argv[0].lstrip("-") in capsys.readouterr().err


def test_expected_alarms_are_the_shared_black_holes_of_the_ground_truth():
    topo = real_mesh.topology(real_mesh.DEMO_SITES)
    wanted = mesh_real.expected_alarms(topo, real_mesh.DEMO_SITES)
    # the ECMP member that drops PTBs, seen from ral towards every site, and towards ral
    # from cern and bnl (the other member of the return split): each in both families
    assert sorted(wanted) == [("ral-b1", "ipv4"), ("ral-b1", "ipv6"),
                              ("ral-b2", "ipv4"), ("ral-b2", "ipv6")]
    assert wanted[("ral-b1", "ipv4")] == {("ral", d) for d in ("cern", "desy", "nikhef", "bnl")}
    assert wanted[("ral-b2", "ipv6")] == {("cern", "ral"), ("bnl", "ral")}
    # the CI instance: one hop seen by ral -> cern, desy and cern -> ral of another member
    ci = mesh_real.expected_alarms(real_mesh.topology(real_mesh.CI_SITES), real_mesh.CI_SITES)
    assert ("ral-b1", "ipv4") in ci and ("ral-b2", "ipv4") not in ci  # one path: no event


class _Mesh(object):
    def __init__(self, sites):
        self.sites = sites
        self.topology = real_mesh.topology(sites)


def _event(mesh, hop, ipv, pairs):
    version = int(ipv[-1])
    hop_ip = sorted(a for a in demo_mesh.addresses(mesh.topology, hop)
                    if (":" in a) == (version == 6))[0]
    return ("MTU black hole shared by multiple sites",
            {"hop_ip": hop_ip, "ipv": ipv, "pairs": [
                # as the archive holds them: the template's host names (a real mesh's run 2
                # failed its alarm check when only addresses were understood)
                "%s -> %s" % (real_mesh.TEMPLATE_NAMES[s], real_mesh.TEMPLATE_NAMES[d])
                for s, d in pairs]})


def test_alarm_checks_want_every_expected_event_once_with_its_paths_and_nothing_else():
    mesh = _Mesh(real_mesh.DEMO_SITES)
    wanted = mesh_real.expected_alarms(mesh.topology, mesh.sites)
    events = [_event(mesh, hop, ipv, sorted(pairs)) for (hop, ipv), pairs in sorted(wanted.items())]
    assert all(c.ok for c in mesh_real.alarm_checks(mesh, events))
    # one missing, one twice, one with a path too few, one not expected at all
    bad = [c for c in mesh_real.alarm_checks(mesh, events[1:]) if not c.ok]
    assert [c.what for c in bad] == ["alarm black hole at ral-b1 ipv4 raised once"]
    assert sum(not c.ok for c in mesh_real.alarm_checks(mesh, events + events[:1])) == 1
    short = [_event(mesh, "ral-b1", "ipv4", sorted(wanted[("ral-b1", "ipv4")])[1:])] + events[1:]
    assert not all(c.ok for c in mesh_real.alarm_checks(mesh, short))
    other = ("jumbo path regressed", {"ipv": "ipv4", "pairs": []})
    assert not all(c.ok for c in mesh_real.alarm_checks(mesh, events + [other]))


def test_a_failed_demo_keeps_the_nodes_logs_before_the_mesh_goes(tmp_path, capsys):
    """pScheduler gives a Missed run no `errors` (2026-11-28: one at load 0.1): the nodes'
    logs are the only account, and the mesh's removal deletes their directories."""
    class _Nodes(object):
        sites = ("cern", "ral")
        rps = str(tmp_path / "rps")
    log = tmp_path / "rps" / "node-cern" / "log"
    log.mkdir(parents=True)
    (log / "runner.log").write_text("run 7 missed\n")
    out = tmp_path / "out"
    mesh_real.keep_logs(_Nodes(), str(out))
    assert (out / "node-logs" / "cern" / "runner.log").read_text() == "run 7 missed\n"
    assert not (out / "node-logs" / "ral").exists()          # a node that never started
    assert "kept in %s" % (out / "node-logs") in capsys.readouterr().out
