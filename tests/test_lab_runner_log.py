"""lab.runner_log: reading pScheduler's runner debug log (lines as the lab's 5.2.5 runner wrote
them on 2026-11-29) for a lost run, and steady.lost_runs saying it for a Missed run."""

import datetime

from lab import runner_log, steady

LOG = """2026-11-29T00:30:35 Next run or check in 0:00:15
2026-11-29T00:30:50 Run 1, starts at 2026-11-29 00:31:06+00:00
2026-11-29T00:30:50 runner-pool: Starting new processor runner-pool-1
2026-11-29T00:30:50 1: Created worker
2026-11-29T00:30:50 Next run or check in 0:00:15
2026-11-29T00:30:54 Run 2, starts at 2026-11-29 00:31:11.250000+00:00
  a continuation line without a stamp
2026-11-29T00:31:05 Next run or check in 0:00:15""".splitlines()

UTC = datetime.timezone.utc


def at(text):
    return datetime.datetime.strptime(text, "%Y-%m-%d %H:%M:%S").replace(tzinfo=UTC)


def test_a_run_taken_has_its_pickup_line_and_one_never_taken_has_none():
    assert runner_log.pickups(LOG, at("2026-11-29 00:31:06")) == [LOG[1]]
    # epoch seconds too; a start with a fraction matches on its whole second
    assert runner_log.pickups(LOG, at("2026-11-29 00:31:11").timestamp()) == [LOG[5]]
    assert runner_log.pickups(LOG, at("2026-11-29 00:31:07")) == []


def test_the_lines_before_a_start_are_those_stamped_in_its_window():
    # 00:30:50 to 00:31:06; a continuation line without a stamp is left out
    assert runner_log.before(LOG, at("2026-11-29 00:31:06"), seconds=16) == LOG[1:6] + LOG[7:]
    assert runner_log.before(LOG, at("2026-11-29 00:31:06"), seconds=15) == LOG[5:6] + LOG[7:]
    assert runner_log.before(LOG, at("2026-11-29 00:30:00")) == []


def test_what_a_missed_run_is_said_to_be():
    assert runner_log.missed_reason(LOG, at("2026-11-29 00:31:07")) == \
        "the runner never took it (no pickup in its debug log)"
    assert runner_log.missed_reason(LOG, at("2026-11-29 00:31:06")).startswith(
        "the runner took it (2026-11-29T00:30:50 Run 1, starts at")
    assert runner_log.missed_reason([], at("2026-11-29 00:31:06")) == "no runner log to tell why"


def test_an_unreadable_log_is_no_lines(tmp_path):
    assert runner_log.read(str(tmp_path / "none.log")) == []
    path = tmp_path / "runner.log"
    path.write_bytes(b"2026-11-29T00:30:50 Run 1, starts at \xff\n")
    assert runner_log.read(str(path)) == ["2026-11-29T00:30:50 Run 1, starts at \ufffd"]


def test_a_nodes_daemon_log_is_where_nodes_sh_writes_it(tmp_path):
    log = tmp_path / "node-cern" / "log"
    log.mkdir(parents=True)
    (log / "runner.log").write_text("a\nb\n")
    (log / "scheduler.log").write_text("c\n")
    assert runner_log.node_log_dir(str(tmp_path), "cern") == str(log)
    assert runner_log.daemon_log(str(tmp_path), "cern") == ["a", "b"]
    assert runner_log.daemon_log(str(tmp_path), "cern", "scheduler") == ["c"]
    assert runner_log.daemon_log(str(tmp_path), "desy") == []


def test_lost_runs_says_what_the_runner_log_says_of_a_missed_run():
    start = at("2026-11-29 00:31:07").timestamp()
    run = steady.Run("cern", "pmtu", "https://x/tasks/t", start, start + 20, "missed", None)
    other = steady.Run("bnl", "pmtu", "https://x/tasks/u", start, start + 20, "missed", None)
    lines = steady.lost_runs([run, other], start + 3600, {"cern": LOG})
    assert lines == [
        "   lost: bnl pmtu 00:31:07 Missed: no runner log to tell why",
        "   lost: cern pmtu 00:31:07 Missed: the runner never took it (no pickup in its debug log)"]
    # without logs, as before
    assert steady.lost_runs([run], start + 3600)[0].endswith("Missed: (no errors given)")


def test_never_taken_only_when_the_runner_was_up_and_looping():
    missed = at("2026-11-29 00:31:07")
    assert runner_log.never_taken(LOG, missed)
    assert not runner_log.never_taken(LOG, at("2026-11-29 00:31:06"))     # taken
    assert not runner_log.never_taken([], missed)                        # no log: no excuse
    # no loop line in the 20 s before: a runner stuck or gone
    assert not runner_log.never_taken(LOG[:2], at("2026-11-29 00:31:30"))
    # a runner that (re)started just before: missed for that, not its window
    restarted = LOG + ["2026-11-29T00:31:20 Started", "2026-11-29T00:31:21 Next run or check in 0:00:15"]
    assert not runner_log.never_taken(restarted, at("2026-11-29 00:31:30"))
    assert runner_log.missed_reason(restarted, at("2026-11-29 00:31:30")).startswith(
        "the runner was not up and looping then")
    # ...and a minute after that restart, looping again: never taken
    later = restarted + ["2026-11-29T00:32:10 Next run or check in 0:00:15"]
    assert runner_log.never_taken(later, at("2026-11-29 00:32:25"))
