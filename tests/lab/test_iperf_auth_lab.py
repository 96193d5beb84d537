"""Issue 23, L1: during a jumbo-throughput run the dest's `iperf3 -s` serves only this run's
client, on only the test's address (namespace lab, both participants as the unprivileged user
`jumbotest`, driven as pScheduler drives them; a foreign client in another lab host, r2).

A foreign client without credentials, or with the run's username and public key but a wrong
password, is refused while it tries; its `--extra-data` last-leg mark does not end the server;
the run's own legs all succeed. The server is not reachable on the dest's other addresses."""

import datetime
import json
import os
import tempfile
import threading
import time

import harness
from lab_support import needs_lab
from jumbo.tool import iperf_auth

USER = "jumbotest"
TEST = "jumbo-throughput"
PORT = 5777
FAKE_LAST = "jumbocheck leg 0 of 4 last"


def _task(lab):
    argv = ["--dest", lab.address("dst", 4), "--duration", "2", "--omit", "0",
            "--port", str(PORT)]
    spec = harness.invoke("test", TEST, "cli-to-spec", argv=argv).json()
    assert harness.invoke("test", TEST, "spec-is-valid", stdin=spec).json() == {"valid": True}
    return {"type": TEST, "spec": spec}


def _foreign_attempt(lab, node, address, version, creds=None):
    """One foreign iperf3 client run from `node`: its JSON (or a dict with its error)."""
    argv = ["iperf3", "-c", address, "-p", str(PORT), "-J", "-t", "1", "-%d" % version,
            "--connect-timeout", "1000", "--extra-data", FAKE_LAST]
    if creds is not None:
        # runuser keeps no environment of ours: env(1) sets the (wrong) password.
        argv = ["env", "IPERF3_PASSWORD=%s" % creds["password"]] + argv + [
            "--username", creds["username"], "--rsa-public-key-path", creds["key-file"]]
    done = lab.run(node, argv, user=USER, check=False, timeout=20)
    try:
        return json.loads(done.stdout)
    except ValueError:
        return {"error": (done.stdout + done.stderr).strip() or "status %d" % done.returncode}


def _completed(doc):
    """True when a foreign client got a test through (bytes moved, no error)."""
    received = ((doc.get("end") or {}).get("sum_received") or {}).get("bytes")
    return not doc.get("error") and bool(received)


def _run_with_intruders(lab, test, attempts, dest_env=None):
    """participant-data on both nodes, both runs at one schedule.start, and meanwhile each
    `attempts` entry (name -> callable(data) -> doc) tried over and over from another host.
    (lead output, dest output, merged, data, {name: [docs]}). `dest_env`: the dest's extra
    environment (its participant-data and run)."""
    data = []
    envs = [{}, dict(dest_env or {})]
    for index, node in enumerate(("src", "dst")):
        done = harness.invoke("tool", "jumbocheck", "participant-data", user=USER,
                              netns=(lab, node), stdin={"participant": index, "test": test},
                              env=envs[index])
        assert done.status == 0, done
        data.append(done.sql_json())
    slot = int(harness.invoke("tool", "jumbocheck", "duration", stdin=test).sql_json()
               ["duration"][2:-1])
    start = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0) \
        + datetime.timedelta(seconds=2)
    done = [None, None]
    tmpdirs = [harness._private_tmpdir(USER) for _ in range(2)]

    def run(index, node):
        run_input = {"schema": 1, "task-uuid": "t", "test": test, "participant": index,
                     "schedule": {"start": start.isoformat(), "duration": "PT%dS" % slot},
                     "participant-data": data}
        done[index] = harness.invoke("tool", "jumbocheck", "run", stdin=run_input, user=USER,
                                     netns=(lab, node), timeout=slot + 10,
                                     env=dict(envs[index], TMPDIR=tmpdirs[index]))

    seen = {name: [] for name in attempts}
    stop = threading.Event()

    def intrude():
        while time.time() < start.timestamp():
            time.sleep(0.05)
        while not stop.is_set():
            for name, attempt in attempts.items():
                seen[name].append(attempt(data))
            time.sleep(0.2)

    threads = [threading.Thread(target=run, args=(i, n)) for i, n in enumerate(("src", "dst"))]
    intruder = threading.Thread(target=intrude)
    try:
        for thread in threads + [intruder]:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        stop.set()
        intruder.join()
        harness._remove_tmpdirs(tmpdirs)
    # Both runs' files are gone with their TMPDIR; nothing of the credentials was left
    # beside it either.
    for completed in done:
        assert completed.status == 0 and completed.stdout.count("\n") == 1, completed
    lead, dest = done[0].runner_json(), done[1].runner_json()
    merged = harness.invoke("tool", "jumbocheck", "merged-results", stdin={
        "test": test, "results": [lead, harness.null_private(dest)]}).json()
    # Nothing private reaches any output: not the private key, not the password.
    secret = iperf_auth.password(data[1]["_token"]) if data[1].get("iperf3-auth") else None
    for text in (done[0].stdout, done[1].stdout, json.dumps(merged)):
        assert (secret is None or secret not in text) and "PRIVATE KEY" not in text
    return lead, dest, merged, data, seen


def _legs_all_succeeded(merged):
    assert merged["succeeded"] is True, merged
    assert [r["mtu"] for r in merged["runs"]] == [1500, 9000, 9000, 1500]
    assert all(r["succeeded"] for r in merged["runs"]), merged["runs"]
    server = merged["server"]
    assert server["succeeded"] is True and server["served"] == 4, server
    assert server["stopped"] == "last-leg", server


@needs_lab
def test_a_foreign_client_without_or_with_wrong_credentials_is_refused(lab_factory):
    lab = lab_factory("clean-jumbo")
    test = _task(lab)
    address = lab.address("dst", 4)
    scratch = tempfile.mkdtemp(prefix="jumbo-intruder-")
    os.chmod(scratch, 0o755)

    def wrong_password(data):
        # The run's username and public key are not secret (participant data); the password
        # is: one guess that is not HMAC(token).
        key = os.path.join(scratch, "public.pem")
        if not os.path.exists(key):
            with open(key, "w") as handle:
                handle.write((data[1].get("iperf3-auth") or {}).get("public-key") or "")
            os.chmod(key, 0o644)
        creds = {"username": iperf_auth.USERNAME, "key-file": key,
                 "password": iperf_auth.password("0" * 32)}
        return _foreign_attempt(lab, "r2", address, 4, creds)

    try:
        lead, dest, merged, data, seen = _run_with_intruders(lab, test, {
            "no-credentials": lambda data: _foreign_attempt(lab, "r2", address, 4),
            "wrong-password": wrong_password})
    finally:
        import shutil
        shutil.rmtree(scratch, ignore_errors=True)
    for name, docs in seen.items():
        assert docs, name
        # Never a test through, and refused by the server itself (it was up and reached).
        assert not any(_completed(d) for d in docs), (name, docs)
        assert any(iperf_auth.REFUSED in str(d.get("error")) for d in docs), (name, docs)
    # The run's legs: all of them, and the server stopped at the run's own last leg, not at
    # the intruders' fake last-leg mark.
    _legs_all_succeeded(merged)
    server = merged["server"]
    assert server["refused"] >= 2, server
    assert server["access"] == {"address": address, "auth": True, "open": []}, server
    assert "authentication is off" not in lead["diags"] + dest["diags"]


@needs_lab
def test_the_server_is_not_reachable_on_another_address_of_the_dest(lab_factory):
    """An IPv4 run: the dest's IPv6 address and its loopback have no iperf3 server at any
    moment of the slot; the test's address has one (the foreign client there is refused by
    iperf3, not by the kernel)."""
    lab = lab_factory("clean-jumbo")
    test = _task(lab)
    lead, dest, merged, data, seen = _run_with_intruders(lab, test, {
        "test-address": lambda data: _foreign_attempt(lab, "r2", lab.address("dst", 4), 4),
        "other-address": lambda data: _foreign_attempt(lab, "r2", lab.address("dst", 6), 6),
        "loopback": lambda data: _foreign_attempt(lab, "dst", "127.0.0.1", 4)})
    for name in ("other-address", "loopback"):
        docs = seen[name]
        # No server there at any moment of the slot: every connection refused by the kernel.
        assert docs and all("connection refused" in str(d.get("error")).lower()
                            for d in docs), (name, docs)
    # On the test's address the server answered (and refused the foreign client).
    assert any(iperf_auth.REFUSED in str(d.get("error")) for d in seen["test-address"]), seen
    _legs_all_succeeded(merged)
    assert merged["server"]["access"]["address"] == lab.address("dst", 4)


@needs_lab
def test_a_dest_iperf3_without_authentication_still_binds_and_says_what_is_open(lab_factory):
    """The dest's iperf3 lacks the authentication options (built without OpenSSL: a shim
    hides them from --help): its participant data carries no key, both runs run the legs
    unauthenticated, the server still listens on the test's address only, and both runs'
    diags say what a network peer can still do."""
    import shutil
    lab = lab_factory("clean-jumbo")
    test = _task(lab)
    import pathlib
    # Not pytest's tmp_path: its parents are closed to the unprivileged user.
    top = pathlib.Path(tempfile.mkdtemp(prefix="jumbo-shim-"))
    shim = top / "bin"
    shim.mkdir()
    real = shutil.which("iperf3")
    (shim / "iperf3").write_text(
        "#!/bin/sh\nif [ \"$1\" = --help ]; then %s --help | grep -v -e rsa- -e username "
        "-e authorized-users -e time-skew; exit 0; fi\nexec %s \"$@\"\n" % (real, real))
    (shim / "iperf3").chmod(0o755)
    for path in (top, shim):
        path.chmod(0o755)
    path = str(shim) + os.pathsep + harness.plugin_env()["PATH"]
    try:
        lead, dest, merged, data, seen = _run_with_intruders(lab, test, {
            "other-address": lambda data: _foreign_attempt(lab, "r2", lab.address("dst", 6), 6)},
            dest_env={"PATH": path})
    finally:
        shutil.rmtree(str(top), ignore_errors=True)
    assert "iperf3-auth" not in data[1] and "_iperf3-key" not in data[1]
    assert "iperf3-auth" in data[0]
    assert all("connection refused" in str(d.get("error")).lower()
               for d in seen["other-address"]), seen
    _legs_all_succeeded(merged)
    server = merged["server"]
    assert server["access"]["address"] == lab.address("dst", 4)
    assert server["access"]["auth"] is False and server["access"]["open"], server
    for diags in (lead["diags"], dest["diags"], merged["diags"]):
        assert "iperf3 authentication is off (the dest's iperf3 cannot authenticate " \
            "clients)" in diags and "end it early" in diags, diags


# The task author's view: everything in the participant data (pScheduler returns it, `_`
# members included, to whoever holds the task's key, which the author sets), used from a
# third host (r2): greet the dest's reflector with the run's token on every candidate port.
TOKEN_HOLDER = r"""
import json, os, select, socket, sys, time
from jumbo.probe.wire import ANSWER, HELLO, decode, encode, token_key
data, address = json.loads(sys.argv[1]), sys.argv[2]
ports = data[1].get("reflector-ports") or [data[1].get("reflector-port")]
key, nonce = token_key(data[1]["_token"]), os.urandom(8)
sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
answered, end = None, time.monotonic() + 0.5
while answered is None and time.monotonic() < end:
    for seq, port in enumerate(ports):
        sock.sendto(encode(key, b"Q", HELLO, seq, nonce, total=128), (address, port))
    if select.select([sock], [], [], 0.1)[0]:
        try:
            reply, peer = sock.recvfrom(2048)
        except OSError:
            continue
        message = decode(key, b"A", reply)
        if message is not None and message[0] == HELLO | ANSWER:
            answered = message[4].decode("ascii", "replace")
print(json.dumps({"answered": answered is not None, "secret": answered}))
"""


@needs_lab
def test_the_participant_data_alone_does_not_drive_the_reflector(lab_factory):
    """Issue 32 row 11: a holder of the run's `_token` (the task author) on another host than
    the run's source greets the dest's reflector on every candidate port during the run: it
    never answers (the requests are counted `foreign`), so it reflects nothing at a third
    party and gives away no run secret; the run's own source is served. With the code before,
    the reflector answered any signed request wherever it came from."""
    lab = lab_factory("clean-jumbo")
    test = _task(lab)
    address = lab.address("dst", 4)
    # python-jumbo/, from python-jumbo/jumbo/tool/iperf_auth.py
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(iperf_auth.__file__))))

    def reflector(data):
        done = lab.run("r2", ["env", "PYTHONPATH=%s" % root, "python3", "-c", TOKEN_HOLDER,
                              json.dumps(data), address], check=False, timeout=20)
        try:
            return json.loads(done.stdout)
        except ValueError:
            return {"error": done.stderr}

    lead, dest, merged, data, seen = _run_with_intruders(lab, test, {"reflector": reflector})
    greeted = seen["reflector"]
    assert greeted and not any(d.get("error") for d in greeted), greeted
    assert not any(d["answered"] for d in greeted), greeted
    reflected = dest["result"]["reflector"]
    assert reflected["stats"]["foreign"] > 0, reflected
    assert reflected["peers"] == [lab.address("src", 4)], reflected
    _legs_all_succeeded(merged)


@needs_lab
def test_the_participant_data_alone_does_not_log_in_to_iperf3(lab_factory):
    """Issue 32 row 11: with the run's username, public key and `_token` (all the task author
    can read), from another host, the dest's iperf3 server (idle all slot: the dest runs
    alone) refuses every try; the password the token gave with the code before
    (HMAC(token)) logged in."""
    lab = lab_factory("clean-jumbo")
    test = _task(lab)
    address = lab.address("dst", 4)
    scratch = tempfile.mkdtemp(prefix="jumbo-author-")
    os.chmod(scratch, 0o755)
    data = [harness.invoke("tool", "jumbocheck", "participant-data", user=USER,
                           netns=(lab, node), stdin={"participant": i, "test": test}).sql_json()
            for i, node in enumerate(("src", "dst"))]
    key = os.path.join(scratch, "public.pem")
    with open(key, "w") as handle:
        handle.write(data[1]["iperf3-auth"]["public-key"])
    os.chmod(key, 0o644)
    creds = {"username": iperf_auth.USERNAME, "key-file": key,
             "password": iperf_auth.password(data[1]["_token"])}
    start = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0) \
        + datetime.timedelta(seconds=2)
    run_input = {"schema": 1, "task-uuid": "t", "test": test, "participant": 1,
                 "schedule": {"start": start.isoformat(), "duration": "PT8S"},
                 "participant-data": data}
    tmpdir = harness._private_tmpdir(USER)
    dest = {}
    runner = threading.Thread(target=lambda: dest.update(done=harness.invoke(
        "tool", "jumbocheck", "run", stdin=run_input, user=USER, netns=(lab, "dst"),
        timeout=20, env={"TMPDIR": tmpdir})))
    tries = []
    try:
        runner.start()
        while time.time() < start.timestamp() + 1.0:
            time.sleep(0.05)
        while time.time() < start.timestamp() + 5.0:
            tries.append(_foreign_attempt(lab, "r2", address, 4, creds))
        runner.join()
    finally:
        harness._remove_tmpdirs([tmpdir])
        import shutil
        shutil.rmtree(scratch, ignore_errors=True)
    assert tries and not any(_completed(d) for d in tries), tries
    assert all(iperf_auth.REFUSED in str(d.get("error")) for d in tries), \
        [d.get("error") for d in tries]
    assert dest["done"].stdout.count("\n") == 1, dest["done"]
