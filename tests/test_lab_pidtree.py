"""lab/real_pscheduler/pidtree.sh: stopping a node's recorded PIDs ends every process they
started too (a daemon under supervise.sh, gunicorn's workers, a child that ignores SIGTERM),
and nothing else. Before it, a stopped node's daemons ran on against the next database started
on the same socket and wrote into a directory being removed (CI: "rm: cannot remove
node-a/log: Directory not empty")."""

import os
import subprocess
import time

import pytest

from lab_support import running

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PIDTREE = os.path.join(ROOT, "lab", "real_pscheduler", "pidtree.sh")

# A parent with a child that ignores SIGTERM and a grandchild: what a supervised daemon with
# a tool of its own looks like. Each writes its PID into the directory given.
TREE = r"""
d=$1
bash -c 'trap "" TERM; sleep 300 & echo $! > "$0/grandchild"; echo $$ > "$0/child"; wait' "$d" &
sleep 300
"""


def _wait_for(path, seconds=5):
    deadline = time.monotonic() + seconds
    while not (os.path.exists(path) and open(path).read().strip()):
        assert time.monotonic() < deadline, path
        time.sleep(0.05)
    return int(open(path).read())


def _stop(pids_file):
    return subprocess.run(["bash", "-c", '. "$0"; stop_pid_file "$1"', PIDTREE, pids_file],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, timeout=60)


@pytest.fixture
def tree(tmp_path):
    bystander = subprocess.Popen(["sleep", "300"])
    parent = subprocess.Popen(["bash", "-c", TREE, "tree", str(tmp_path)])
    started = [parent.pid, _wait_for(str(tmp_path / "child")),
               _wait_for(str(tmp_path / "grandchild"))]
    yield started, bystander
    for pid in started:
        if running(pid):
            os.kill(pid, 9)
    bystander.kill()
    bystander.wait()
    parent.wait()


def test_the_whole_tree_of_a_recorded_pid_ends_and_nothing_else(tree, tmp_path):
    started, bystander = tree
    pids_file = tmp_path / "pids"
    pids_file.write_text("%d\n" % started[0])
    assert all(running(pid) for pid in started)
    t0 = time.monotonic()
    done = _stop(str(pids_file))
    took = time.monotonic() - t0
    assert done.returncode == 0, done.stdout
    assert [pid for pid in started if running(pid)] == []
    assert not pids_file.exists()
    # the child ignores SIGTERM: it ends only by SIGKILL, after the 10 s grace
    assert took >= 10, took
    assert bystander.poll() is None          # not in the tree: left alone


def test_a_recorded_pid_that_already_ended_is_passed_over(tmp_path):
    gone = subprocess.Popen(["true"])
    gone.wait()
    bystander = subprocess.Popen(["sleep", "300"])
    try:
        pids_file = tmp_path / "pids"
        pids_file.write_text("%d\n" % gone.pid)
        done = _stop(str(pids_file))
        assert done.returncode == 0, done.stdout
        assert not pids_file.exists()
        assert bystander.poll() is None
    finally:
        bystander.kill()
        bystander.wait()


def test_no_pids_file_is_nothing_to_stop(tmp_path):
    assert _stop(str(tmp_path / "absent")).returncode == 0
