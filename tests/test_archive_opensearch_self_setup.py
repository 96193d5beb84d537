"""jumbo.archive.opensearch.self_setup: the archiver's own set-up at its first write resumes
across `archive` processes (issue 32, row 1). pScheduler's daemon replaces the process after a
`retry` answer, so each try here is a new process, killed once it has answered; the archive is
a real OpenSearch behind a relay that holds every request.
"""

import json
import os
import signal
import subprocess
import sys
import uuid

import harness
from fixtures import samples
from jumbo.archive.opensearch import ready, self_setup
from jumbo.archive.stores import open_store
from opensearch_fixture import drop_prefix
from relay_proxy import SlowRelay


# One `archive` process as pScheduler's daemon runs it, with the record's deadline scaled
# down from 90 s: it is killed once it has answered, as the daemon's pool replaces a process
# after a `retry`; its install thread dies with it.
ARCHIVE_WITH_DEADLINE = ("import sys\n"
                         "from jumbo.archive import archiver\n"
                         "archiver.RECORD_DEADLINE = float(sys.argv[1])\n"
                         "from jumbo.protocol import archiver as method\n"
                         "sys.exit(method.archive())\n")


def _one_try(record, deadline, cache_dir):
    proc = subprocess.Popen([sys.executable, "-c", ARCHIVE_WITH_DEADLINE, str(deadline)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            env=harness.plugin_env({"JUMBO_CACHE_DIR": cache_dir}),
                            cwd=os.path.dirname(harness.method_path("archiver", "jumbo",
                                                                    "archive")))
    try:
        proc.stdin.write(("\x1e" + json.dumps(record) + "\n").encode())
        proc.stdin.flush()
        line = proc.stdout.readline().decode()
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    assert line.startswith("\x1e"), "no reply from the archive process"
    return json.loads(line[1:])


def test_a_slow_archive_gets_set_up_across_replaced_processes(opensearch_url, tmp_path, monkeypatch):
    # Scaled from the 12 s per request and 90 s deadline: 0.25 s and 2 s, 8 requests
    # per try. A fresh set-up takes 13 requests, the check and the writes 4 more: on the code
    # before, each new process began the install again from its first request and the record
    # was answered `retry` until the policy ran out.
    prefix = "p%s_" % uuid.uuid4().hex[:8]
    relay = SlowRelay(opensearch_url, delay=0.25)
    record = dict(samples.pmtu_envelope(5, dest="ps-resume"),
                  data={"_url": "%s/?prefix=%s" % (relay.url, prefix)})
    direct = open_store("%s/?prefix=%s" % (opensearch_url, prefix))
    replies = []
    try:
        while len(replies) < 10 and not (replies and replies[-1]["succeeded"]):
            replies.append(_one_try(record, 2.0, str(tmp_path)))
        assert replies[-1] == {"succeeded": True}, replies
        assert all("retry" in reply for reply in replies[:-1]), replies
        assert "being set up by the archiver" in replies[0]["error"], replies
        # The processes' notes: the archive noted ready, the install no longer under way.
        monkeypatch.setenv("JUMBO_CACHE_DIR", str(tmp_path))
        store = open_store(record["data"]["_url"])
        try:
            assert ready.is_ready(store._ready_key)
            assert not ready.Progress(store._ready_key).done(self_setup.INSTALLING)
        finally:
            store.close()
        assert direct.count("pmtu") == 1
        assert direct.count("trace", index=direct.name("jumbo_history")) == 1
        sys.stderr.write("set up across %d archive processes\n" % len(replies))
    finally:
        relay.close()
        drop_prefix(direct, prefix)
