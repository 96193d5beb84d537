"""jumbo.archive.replay (jumbo-replay) and jumbo.archive.json_stream (issue 31): a secured source
store gets its own credentials and CA, a mistyped SQLite source is refused, a source that fails
leaves no target, and a file is read one item at a time with progress on stderr.

The secured archive is a real authenticating TLS front end (test_archive_archiver.FrontProxy: basic
auth, as perfSONAR's Apache in front of its OpenSearch) over the real test OpenSearch, which
itself runs without the security plugin (scripts/opensearch.sh).
"""

import io
import json
import os
import subprocess
import sys
import uuid

from fixtures import samples
from jumbo.archive import replay
from jumbo.archive.stores import open_store
from opensearch_fixture import drop_prefix
from test_archive_archiver import FrontProxy, certificate  # noqa: F401 - certificate is a fixture pytest finds by name

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENV = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, os.path.join(ROOT, "python-jumbo")]))


def _run(capsys, *argv):
    status = replay.main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def _hrefs(url):
    store = open_store(url)
    try:
        return sorted(item.get("run-href") or item.get("run_href") for item in store.export())
    finally:
        store.close()


def test_a_secured_source_archive_is_read_with_its_own_login_and_ca(
        opensearch_url, certificate, tmp_path, capsys):  # noqa: F811 - the fixture imported above
    cert, key = certificate
    prefix = "rs%s_" % uuid.uuid4().hex[:8]
    direct = open_store("%s/?prefix=%s" % (opensearch_url, prefix))
    envelopes = [samples.pmtu_envelope(n, dest="ps-src-%d" % n) for n in range(3)]
    assert direct.put_many(envelopes) == [None] * 3
    direct.refresh()
    front = FrontProxy(opensearch_url, "reader", "r3ad:er", certfile=cert, keyfile=key)
    auth = tmp_path / "source-auth"
    auth.write_text("reader:r3ad:er\n")
    source = "%s/?prefix=%s" % (front.url, prefix)
    target = tmp_path / "copy.db"
    try:
        # Without the source's login: 401, and no target left behind.
        status, out, err = _run(capsys, source, "--to", "sqlite:///" + str(target),
                                "--source-ca-file", cert, "--quiet")
        assert status == 2 and "401" in err, (status, out, err)
        assert not target.exists()
        # The target's options are the target's: they never log in to the source.
        status, out, err = _run(capsys, source, "--to", "sqlite:///" + str(target),
                                "--auth-file", str(auth), "--source-ca-file", cert, "--quiet")
        assert status == 2 and "401" in err and not target.exists(), (status, out, err)
        status, out, err = _run(capsys, source, "--to", "sqlite:///" + str(target),
                                "--source-auth-file", str(auth), "--source-ca-file", cert)
        assert status == 0, (out, err)
        assert "3 stored" in out and "0 rejected" in out, out
        assert _hrefs("sqlite:///" + str(target)) == sorted(e["run-href"] for e in envelopes)
        # Without the CA the certificate is not trusted: refused, not read.
        other = tmp_path / "other.db"
        status, out, err = _run(capsys, source, "--to", "sqlite:///" + str(other),
                                "--source-auth-file", str(auth), "--quiet")
        assert status == 2 and "certificate" in err.lower() and not other.exists(), err
    finally:
        front.close()
        drop_prefix(direct, prefix)


def test_a_mistyped_sqlite_source_is_refused_and_nothing_is_created(tmp_path, capsys):
    typo = tmp_path / "histroy.db"
    target = tmp_path / "target.db"
    status, out, err = _run(capsys, "sqlite:///" + str(typo), "--to", "sqlite:///" + str(target))
    assert status == 2, (out, err)
    assert "source store sqlite:///%s does not exist" % typo in err
    assert not typo.exists() and not target.exists()
    # A missing file source the same: no target.
    status, out, err = _run(capsys, str(tmp_path / "missing.json"), "--to",
                            "sqlite:///" + str(target))
    assert status == 2 and "No such file" in err and not target.exists(), err


def test_the_file_reader_gives_each_item_of_every_accepted_shape(monkeypatch):
    from jumbo.archive import json_stream   # new with the streaming reader
    monkeypatch.setattr(json_stream, "CHUNK", 5)    # every value cut by a chunk's end
    shapes = {'[{"a": 1}, {"b": [1, 2]}, 12345, "x"]': [{"a": 1}, {"b": [1, 2]}, 12345, "x"],
              '{"a": 1}\n{"b": 123456}\n': [{"a": 1}, {"b": 123456}],
              '\x1e{"a": 1}\n\x1e{"b": 2}\n': [{"a": 1}, {"b": 2}],
              '  {\n  "a": 1\n}\n': [{"a": 1}], "[ ]": [], "": []}
    for text, expected in shapes.items():
        assert list(json_stream.items(io.StringIO(text))) == expected, text
    for text, error in (('[{"a": 1}, {"b"', "line 1: invalid JSON"),
                        ('{"a": 1}\n{bad}\n', "line 2: invalid JSON"),
                        ("[1 2]", "expected ',' or ']'"), ("[1,", "not closed")):
        try:
            list(json_stream.items(io.StringIO(text)))
            raise AssertionError("accepted: %r" % text)
        except ValueError as err:
            assert error in str(err), (text, err)


# Runs jumbo-replay as its only child and prints the child's peak RSS (KiB).
PEAK_RSS = ("import resource, subprocess, sys\n"
            "done = subprocess.run(sys.argv[1:])\n"
            "sys.stderr.write('PEAK-RSS-KIB %d\\n' % "
            "resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
            "sys.exit(done.returncode)\n")
PAD = 300 * 1024
ITEMS = 200           # 60 MB of file


def _replay_peak(source, target, *options):
    done = subprocess.run([sys.executable, "-c", PEAK_RSS, sys.executable, "-m",
                           "jumbo.archive.replay", str(source), "--to", "sqlite:///" + str(target),
                           "--batch", "10"] + list(options), env=ENV, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, timeout=300)
    assert done.returncode == 0, done.stderr
    peak = [int(line.split()[1]) for line in done.stderr.splitlines()
            if line.startswith("PEAK-RSS-KIB ")]
    return done, peak[0]


def test_a_large_file_is_streamed_with_progress(tmp_path):
    big, small = tmp_path / "big.json", tmp_path / "small.json"
    with open(str(big), "w") as handle:
        handle.write("[")
        for n in range(ITEMS):
            envelope = dict(samples.pmtu_envelope(n, dest="ps-big"), **{"x-pad": "p" * PAD})
            handle.write(("," if n else "") + json.dumps(envelope))
        handle.write("]")
    small.write_text(json.dumps([samples.pmtu_envelope(0, dest="ps-small")]))
    size_kib = os.path.getsize(str(big)) >> 10
    quiet, baseline = _replay_peak(small, tmp_path / "small.db", "--quiet")
    assert "1 stored" in quiet.stdout and "read" not in quiet.stderr, quiet.stderr
    done, peak = _replay_peak(big, tmp_path / "big.db")
    assert "%d stored" % ITEMS in done.stdout, done.stdout
    progress = [line for line in done.stderr.splitlines() if " read, " in line]
    assert progress and progress[0] == "jumbo-replay: 10 read, 10 stored, 0 rejected", progress
    # Read whole, the file's text and its parsed items cost over twice its size.
    grown = peak - baseline
    sys.stderr.write("replay of %d KiB: peak RSS %d KiB over a one-item replay's %d KiB\n"
                     % (size_kib, grown, baseline))
    assert grown < size_kib // 3, "peak RSS grew %d KiB for a %d KiB file" % (grown, size_kib)
