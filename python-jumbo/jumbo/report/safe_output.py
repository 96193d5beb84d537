"""What the report writes is data from the mesh (host names, site labels taken from a task's
`reference`, hop addresses): it must not act on the reader's tools.

  csv_cell(text)   a spreadsheet never evaluates it: a cell starting with = + - @ TAB or CR is
                   a formula to Excel/LibreOffice (and @/-/+ start DDE payloads); such a cell
                   gets a leading apostrophe, the usual neutral prefix. Control characters
                   are escaped (as in text).
  text_line(text)  one printable line: control characters (ESC sequences that drive the
                   terminal, CR that overwrites the line, newlines that forge report lines)
                   become \\xNN escapes; the bidirectional overrides, embeddings and
                   isolates (U+202A-202E, U+2066-2069) and marks (U+200E, U+200F, U+061C),
                   which reorder what the reader sees ("Trojan Source"), become \\uNNNN.
  html_text(text)  text for an HTML page: text_line (the bidi controls would reorder the
                   page as they reorder a terminal: a browser applies them inside a table
                   cell or an SVG label), then HTML-escaped (& < > " ').
  message(text)    an error text from outside (Prometheus, OpenSearch, a file) for the
                   terminal: text_line, and at most 2000 characters.
  write_atomic(path, text)   the output file replaced whole: the temporary file is created
                   by mkstemp in the target's directory (O_EXCL, never following a link
                   planted at its name), written and synced, then renamed over the target
                   (a link planted at the target's own name is replaced, its target left
                   alone), and the directory synced: after a crash the file is the old
                   one or the new one, never a torn one.
"""

import html
import os
import re
import tempfile

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e"
                      "\u2066-\u2069]")
MAX_MESSAGE = 2000


def _escape(match):
    return "\\x%02x" % ord(match.group(0)) if ord(match.group(0)) < 0x100 else \
        "\\u%04x" % ord(match.group(0))


def text_line(text):
    return _CONTROL.sub(_escape, text)


def html_text(text):
    return html.escape(text_line(text), quote=True)


def message(text):
    text = str(text)
    if len(text) > MAX_MESSAGE:
        text = text[:MAX_MESSAGE] + "..."
    return text_line(text)


def csv_cell(text):
    if text.startswith(FORMULA_START):
        text = "'" + text
    return _CONTROL.sub(_escape, text)


def write_atomic(path, text):
    """`text` (a string, or an iterable of strings written one after another) into `path`,
    whole or not at all."""
    directory = os.path.dirname(os.path.abspath(path))
    fd, temp = tempfile.mkstemp(prefix=".%s." % os.path.basename(path), suffix=".tmp",
                                dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            if isinstance(text, str):
                handle.write(text)
            else:
                for piece in text:
                    handle.write(piece)
            handle.flush()
            os.fsync(handle.fileno())
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
    _sync_directory(directory)


def _sync_directory(directory):
    """The rename made durable (best effort: some file systems refuse a directory fsync)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
