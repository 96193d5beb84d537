"""What the report writes is data from the mesh (host names, site labels taken from a task's
`reference`, hop addresses): it must not act on the reader's tools.

  csv_cell(text)   a spreadsheet never evaluates it: a cell starting with = + - @ TAB or CR is
                   a formula to Excel/LibreOffice (and @/-/+ start DDE payloads); such a cell
                   gets a leading apostrophe, the usual neutral prefix. Control characters
                   are escaped (as in text).
  text_line(text)  one printable line: control characters (ESC sequences that drive the
                   terminal, CR that overwrites the line, newlines that forge report lines)
                   become \\xNN escapes.
  write_atomic(path, text)   the output file replaced whole: the temporary file is created
                   by mkstemp in the target's directory (O_EXCL, never following a link
                   planted at its name), then renamed over the target.
"""

import os
import re
import tempfile

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def _escape(match):
    return "\\x%02x" % ord(match.group(0)) if ord(match.group(0)) < 0x100 else \
        "\\u%04x" % ord(match.group(0))


def text_line(text):
    return _CONTROL.sub(_escape, text)


def csv_cell(text):
    if text.startswith(FORMULA_START):
        text = "'" + text
    return _CONTROL.sub(_escape, text)


def write_atomic(path, text):
    directory = os.path.dirname(os.path.abspath(path))
    fd, temp = tempfile.mkstemp(prefix=".%s." % os.path.basename(path), suffix=".tmp",
                                dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temp, 0o666 & ~umask)  # as open(path, "w") would have made it
        os.replace(temp, path)
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise
