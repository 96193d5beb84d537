"""demo/mesh_real.py's options: `make demo-mesh` checks three rounds back to back by default
(issue 29's "three runs"), on the lab's shortened hourly schedule, and refuses what cannot be
a schedule; its memory figure counts shared pages once."""

import os

import pytest

from demo import mesh_real


def test_defaults_are_three_rounds_on_a_five_minute_schedule():
    args = mesh_real.parse_args([])
    assert (args.rounds, args.repeat, args.slip) == (3, "PT5M", "PT2M")
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
