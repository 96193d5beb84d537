"""Issue 23 (hardening) L8: JSON nested 100,000 deep is a clean answer of every method that
reads JSON, never a traceback; the reflector survives an authenticated STATUS nested deep,
and the archive stream a record nested deep."""

import json
import socket
import threading
import time

import harness
from jumbo.archive import archiver
from jumbo.protocol import archiver as archiver_methods, method, pmtu
from jumbo.tool import reflector
from jumbo.probe import wire

DEEP = "[" * 100000 + "]" * 100000


def test_loads_words_deep_nesting_as_invalid_json():
    try:
        method.loads(DEEP)
    except ValueError as err:
        assert str(err) == "Invalid JSON: nested too deeply"
    else:
        raise AssertionError("no error")
    assert pmtu.spec_is_valid(DEEP) == {"valid": False, "error": "Invalid JSON: nested too deeply"}
    assert archiver_methods.data_is_valid('{"_url": %s}' % DEEP) == {
        "valid": False, "error": "Invalid JSON: nested too deeply"}


def test_executables_answer_deep_nesting_without_a_traceback():
    answer = harness.invoke("test", "pmtu", "spec-is-valid", stdin=DEEP)
    assert answer.status == 0 and "Traceback" not in answer.stderr
    assert json.loads(answer.stdout) == {"valid": False,
                                         "error": "Invalid JSON: nested too deeply"}
    answer = harness.invoke("tool", "jumbocheck", "duration", stdin=DEEP)
    assert answer.status == 1 and "Traceback" not in answer.stderr
    assert "nested too deeply" in answer.stderr


def test_the_archive_stream_answers_a_deep_record_and_goes_on():
    replies = archiver.Archiver().handle([("\x1e" + DEEP).encode(), b"\x1e[]"])
    assert replies[0] == {"succeeded": False, "error": "malformed record: nested too deeply"}
    assert replies[1]["succeeded"] is False and "not a JSON object" in replies[1]["error"]


def test_the_reflector_survives_a_deep_authenticated_status():
    token = wire.new_token()
    key = reflector.token_key(token)
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    probe.bind(("127.0.0.1", 0))
    holder = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    holder.bind(("127.0.0.1", 0))
    port = holder.getsockname()[1]
    holder.close()
    server = reflector.Reflector(port, token, (4,)).open()
    errors = []

    def serve():
        try:
            server.serve(time.monotonic() + 5)
        except BaseException as err:  # noqa: BLE001 - the test reports what ended the thread
            errors.append(err)

    thread = threading.Thread(target=serve)
    thread.start()
    try:
        body = b"[" * 60000
        probe.sendto(reflector.encode(key, b"Q", reflector.STATUS, 1, b"d" * 8, body=body),
                     ("127.0.0.1", port))
        probe.settimeout(2)
        data, _ = probe.recvfrom(65535)
        kind, seq, _, _, answer = reflector.decode(key, b"A", data)
        assert (kind, seq) == (reflector.STATUS | reflector.ANSWER, 1)
        assert json.loads(answer.decode())["boundary"] == {}
    finally:
        thread.join(8)
        server.close()
        probe.close()
    assert errors == []
