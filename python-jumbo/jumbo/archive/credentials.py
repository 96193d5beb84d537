"""A store login for the command-line tools (jumbo-report, jumbo-replay) without putting it
in their arguments, which every user of the host sees in the process list:

    --auth-file FILE      one line "user:password" (the password may contain ':')
    JUMBO_STORE_AUTH      the same "user:password" in the environment (readable only by
                          the same user, in /proc/PID/environ)

A login in the store URL (https://user:pass@host) still works, and is what these replace.
"""

import os

from ..core.errors import JumboError

AUTH_ENV = "JUMBO_STORE_AUTH"


class CredentialsError(JumboError, ValueError):
    pass


def parse(text, where):
    text = text.strip("\r\n")
    user, separator, password = text.partition(":")
    if not separator or not user or "\n" in text:
        raise CredentialsError("%s: expected one line 'user:password'" % where)
    return user, password


def read_auth_file(path):
    """(user, password) from `path`; CredentialsError naming the file (never its content)."""
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except (OSError, UnicodeDecodeError) as err:
        raise CredentialsError("--auth-file %s: %s" % (path, getattr(err, "strerror", None)
                                                       or type(err).__name__))
    return parse(text, "--auth-file %s" % path)


def login(auth_file=None, environ=None):
    """(user, password) from --auth-file, else from JUMBO_STORE_AUTH, else None."""
    if auth_file:
        return read_auth_file(auth_file)
    value = (os.environ if environ is None else environ).get(AUTH_ENV)
    if value:
        return parse(value, AUTH_ENV)
    return None
