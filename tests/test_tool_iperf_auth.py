"""Issue 23, L1 without the lab: what the participant data carries for the dest's iperf3
server's authentication, how both runs decide on it, the credential files, the fallback, and
that a refused test never counts as a leg or ends the server."""

import os
import stat

import pytest

from jumbo.tool import iperf_auth, runner, throughput

PAIR = {"type": "jumbo-throughput", "spec": {"schema": 1, "dest": "198.18.2.2"}}
HAVE_AUTH = iperf_auth.features()["auth"] and iperf_auth.openssl_path()
needs_auth = pytest.mark.skipif(not HAVE_AUTH, reason="iperf3 with authentication and openssl")


@needs_auth
def test_the_dest_participant_data_has_a_fresh_key_pair_and_the_private_key_is_private():
    answers = [runner.participant_data({"participant": 1, "test": PAIR}) for _ in range(2)]
    for data in answers:
        public = data["iperf3-auth"]
        assert public["username"] == iperf_auth.USERNAME
        assert public["public-key"].startswith("-----BEGIN PUBLIC KEY-----")
        assert "pkcs1" in public["paddings"]
        assert data["_iperf3-key"].startswith("-----BEGIN PRIVATE KEY-----")
        # No password anywhere: it is derived from _token by both runs.
        assert iperf_auth.password(data["_token"]) not in repr(data)
        assert [k for k in data if "key" in k or "token" in k] == sorted(
            k for k in data if k.startswith("_"))
    assert answers[0]["_iperf3-key"] != answers[1]["_iperf3-key"]
    source = runner.participant_data({"participant": 0, "test": PAIR})
    source.pop("source-address", None)  # where this machine routes to the spec's dest
    assert source == {"schema": 1, "protocol": 2, "iperf3-auth": {
        "paddings": iperf_auth.features()["paddings"]}}


def _data(client=True, server=True, token="ab" * 16):
    source = {"schema": 1, "protocol": 1}
    dest = {"schema": 1, "protocol": 1, "iperf3-port": 5777, "_token": token}
    if client:
        source["iperf3-auth"] = {"paddings": ["pkcs1"]}
    if server:
        dest["iperf3-auth"] = {"username": "jumbocheck", "public-key": "PUB",
                               "paddings": ["oaep", "pkcs1"]}
        dest["_iperf3-key"] = "PRIV"
    return [source, dest]


def test_both_runs_decide_alike_and_fall_back_with_the_reason():
    settings, why = iperf_auth.decide(_data())
    assert why is None and settings["padding"] == "pkcs1"  # the one both builds speak
    assert settings["password"] == iperf_auth.password("ab" * 16)
    assert settings["password"] != iperf_auth.password("cd" * 16)
    for data, reason in ((_data(client=False), "source's iperf3"),
                         (_data(server=False), "dest's iperf3"),
                         (_data(token=None), "token"), ([], "dest's iperf3"), (None, "dest")):
        settings, why = iperf_auth.decide(data)
        assert settings is None and reason in why
    note = iperf_auth.open_notes("the dest's iperf3 cannot authenticate clients", "198.18.2.2")
    assert "anyone who can reach" in note[0] and "198.18.2.2" in note[0]


@needs_auth
def test_credential_files_are_0600_in_tmpdir_and_removed(tmp_path, monkeypatch):
    """Where memfd_create is missing: the files on disk, 0600 in a 0700 directory."""
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile
    monkeypatch.setattr(tempfile, "tempdir", None)
    settings, _ = iperf_auth.decide(_data())
    with iperf_auth.Credentials(settings, server=True, in_memory=False) as server:
        files = [server.argv[server.argv.index(o) + 1]
                 for o in ("--rsa-private-key-path", "--authorized-users-path")]
        for path in files:
            assert path.startswith(str(tmp_path))
            assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
        assert stat.S_IMODE(os.stat(os.path.dirname(files[0])).st_mode) == 0o700
        with open(files[1]) as handle:
            user, digest = handle.read().strip().split(",")
        assert user == "jumbocheck" and len(digest) == 64
        assert settings["password"] not in " ".join(server.argv) and server.env is None
    assert not os.listdir(str(tmp_path))
    with iperf_auth.Credentials(settings, server=False, in_memory=False) as client:
        assert client.env["IPERF3_PASSWORD"] == settings["password"]
        assert settings["password"] not in " ".join(client.argv)
        assert "--username" in client.argv and "--rsa-public-key-path" in client.argv
    assert not os.listdir(str(tmp_path))
    with iperf_auth.Credentials(None, server=False) as nothing:
        assert nothing.argv == [] and nothing.env is None


# A dest run's credentials held, then the process SIGKILLed (as when the runner's kill or the
# OOM killer ends it): what does it leave in its TMPDIR?
HOLD_CREDENTIALS = r"""
import json, sys, time
from jumbo.tool import iperf_auth
settings = json.loads(sys.stdin.read())
with iperf_auth.Credentials(settings, server=True) as cred:
    print(json.dumps(cred.argv), flush=True)
    time.sleep(60)
"""


@needs_auth
def test_a_killed_dest_leaves_no_key_behind(tmp_path):
    """Issue 32 row 12: the key and users file are memory files, read by iperf3 through our
    /proc entry: readable while the run lives, gone with it when it is SIGKILLed (the
    directory of the code before stayed, key inside)."""
    import json
    import signal
    import subprocess
    import sys
    settings, _ = iperf_auth.decide(_data())
    env = dict(os.environ, TMPDIR=str(tmp_path),
               PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    proc = subprocess.Popen([sys.executable, "-c", HOLD_CREDENTIALS], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, universal_newlines=True, env=env)
    try:
        proc.stdin.write(json.dumps(settings))
        proc.stdin.close()
        argv = json.loads(proc.stdout.readline())
        key = argv[argv.index("--rsa-private-key-path") + 1]
        with open(key) as handle:
            assert handle.read() == settings["private-key"]
    finally:
        os.kill(proc.pid, signal.SIGKILL)  # our own child, by its PID
        proc.wait()
    assert not os.path.exists(key)
    assert os.listdir(str(tmp_path)) == []


def test_stale_key_directories_of_ours_are_removed_by_age(tmp_path):
    """Where keys must go to disk: a killed run's directory (ours, old) goes at the next run;
    a fresh one (a run going on), a link and another name stay."""
    import time
    old, fresh = tmp_path / "jumbo-iperf3-old", tmp_path / "jumbo-iperf3-fresh"
    other = tmp_path / "someone-else"
    for path in (old, fresh, other):
        path.mkdir()
        (path / "key.pem").write_text("x")
    link = tmp_path / "jumbo-iperf3-link"
    link.symlink_to(other)
    now = time.time()
    for path in (old, other):
        os.utime(str(path), (now - 2 * iperf_auth.STALE_SECONDS,) * 2)
    os.utime(str(link), (now - 2 * iperf_auth.STALE_SECONDS,) * 2, follow_symlinks=False)
    assert iperf_auth.remove_stale_directories(str(tmp_path), now) == 1
    assert sorted(os.listdir(str(tmp_path))) == ["jumbo-iperf3-fresh", "jumbo-iperf3-link",
                                                 "someone-else"]
    assert (other / "key.pem").exists()


def test_an_iperf3_without_authentication_is_told_apart(tmp_path):
    fake = tmp_path / "iperf3"
    fake.write_text("#!/bin/sh\ncase \"$1\" in --version) echo 'iperf 3.12 (cJSON 1.7.15)';;"
                    "*) echo '  -s, --server   run in server mode';; esac\n")
    fake.chmod(0o755)
    found = iperf_auth.features(str(fake))
    assert found["auth"] is False and "without OpenSSL" in found["reason"]
    old = tmp_path / "old"
    old.write_text("#!/bin/sh\ncase \"$1\" in --version) echo 'iperf 3.5';; *) echo "
                   "'--rsa-private-key-path --authorized-users-path --username "
                   "--rsa-public-key-path';; esac\n")
    old.chmod(0o755)
    assert "environment" in iperf_auth.features(str(old))["reason"]


def test_can_run_names_a_missing_openssl(monkeypatch):
    monkeypatch.setattr(iperf_auth, "features", lambda path=None: {"auth": True})
    monkeypatch.setattr(iperf_auth, "openssl_path", lambda: None)
    monkeypatch.setattr(throughput, "available", lambda: (True, None))
    answer = runner.can_run(PAIR)
    assert answer["can-run"] is False and "openssl" in answer["reasons"][0]
    assert runner.can_run({"type": "pmtu", "spec": {"schema": 1, "dest": "x"}}) == {
        "can-run": True}


def test_a_refused_test_is_neither_a_leg_nor_the_last_one():
    refused = {"error": "error - test authorization failed",
               "extra_data": "jumbocheck leg 0 of 4 last", "end": {}}
    assert throughput.refused(refused) and not throughput.is_last(refused)
    assert throughput.is_last({"extra_data": "jumbocheck leg 3 of 4 last", "end": {}})


def test_a_leg_the_dest_refused_says_why():
    result = {"runs": [{"error": "iperf3: test authorization failed"}, {"error": None}]}
    iperf_auth.explain(result)
    assert "clock" in result["runs"][0]["error"] and result["runs"][1]["error"] is None
