"""Who may use the dest's `iperf3 -s` during a jumbo-throughput slot: only this run's client,
on only the address the test uses.

The address: the server is bound (`-B`) to the spec's `dest` resolved in the run's family
(the spec's `ip-version`, else the family the suite's one resolver gives, IPv4 first): the
address the lead probes and runs its legs against.

The client: iperf3's own authentication (iperf3 >= 3.7 built with OpenSSL; the password comes
from the environment, `IPERF3_PASSWORD`, never from a command line). Keyed from the participant
data, computed at scheduling time:
  p0 adds  "iperf3-auth": {"paddings": [...]}       its iperf3 can authenticate to a server
  p1 adds  "iperf3-auth": {"username", "public-key", "paddings"}   and
           "_iperf3-key": <PEM RSA private key, new for every run (`openssl genpkey`)>
The private key is a `_` member: pScheduler gives it to both runs (the lead is the legitimate
client) and nulls it to other readers, but not to the task author (docs/security.md). The
password is HMAC-SHA256 of the run's `_token` and of the secret the dest makes when its run
starts and its reflector gives to the run's source address only (jumbo.tool.reflector_port):
the participant data alone does not give it. The server's key and users file, and the client's
public key, are never on disk: each is an anonymous memory file (memfd_create) that iperf3
opens as /proc/<our pid>/fd/<n>, gone with our process however it ends (SIGKILL included).
Where memfd_create is missing (glibc < 2.27) they are written 0600 into a fresh directory
under TMPDIR, removed when the phase ends; such directories left by a killed run are removed
by the next one (ours, older than STALE_SECONDS).

iperf3 < 3.17 encrypts with PKCS#1 v1.5 padding, 3.17 and later with OAEP unless told
`--use-pkcs1-padding`: each side lists what it can speak, and both use OAEP when both can.

When either side cannot authenticate (older iperf3, no OpenSSL in it), the server still listens
on the test's address only, and the diags say what is left open (`open_notes`).

Everything here runs on the nodes: Python 3.6, standard library only.
"""

import ctypes
import hashlib
import hmac
import os
import re
import shutil
import socket
import subprocess
import tempfile
import time

from ..core.resolve import ResolveError, resolve

USERNAME = "jumbocheck"
KEY_BITS = 2048
# iperf3 refuses credentials whose timestamp is further than this from the server's clock
# (its own default, said explicitly). A run whose nodes' clocks differ by more fails its
# timeline anyway (the lead gives the dest 2 s of START_WAIT).
TIME_SKEW = 10
# iperf3 reads IPERF3_PASSWORD since 3.7; older clients ask a terminal the runner does not have.
MIN_VERSION = (3, 7)
_OPTIONS = ("--rsa-private-key-path", "--authorized-users-path", "--username",
            "--rsa-public-key-path")
_PASSWORD_LABEL = b"jumbocheck iperf3 password v1"
REFUSED = "authorization failed"  # iperf3's "test authorization failed"
DIRECTORY_PREFIX = "jumbo-iperf3-"
# A key directory of ours older than this is a killed run's (a slot is at most
# throughput-max-slot, PT10M by default; an administrator may allow more, not days).
STALE_SECONDS = 86400
MFD_CLOEXEC = 1
_features = {}


def _output(argv, data=None, timeout=20):
    done = subprocess.run(argv, input=data, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=timeout)
    return done.returncode, done.stdout, done.stderr


def features(path=None):
    """What the local iperf3 can do: {"auth": bool, "paddings": [...], "skew": bool,
    "reason": why not auth or None}. Read once per binary from `--help` and `--version`."""
    path = path or shutil.which("iperf3")
    if path in _features:
        return _features[path]
    found = {"auth": False, "paddings": [], "skew": False, "reason": None}
    if not path:
        found["reason"] = "iperf3 is not installed"
        return found
    try:
        _, help_text, help_err = _output([path, "--help"], timeout=5)
        _, version_text, _ = _output([path, "--version"], timeout=5)
    except (OSError, subprocess.SubprocessError) as err:
        found["reason"] = "cannot run %s: %s" % (path, err)
        return found
    help_text += help_err
    match = re.search(r"iperf (\d+)\.(\d+)", version_text)
    version = (int(match.group(1)), int(match.group(2))) if match else None
    missing = [o for o in _OPTIONS if o not in help_text]
    if missing:
        found["reason"] = "this iperf3 has no authentication (built without OpenSSL: no %s)" \
            % missing[0]
    elif version is None or version < MIN_VERSION:
        found["reason"] = "this iperf3 (%s) cannot take a password from the environment " \
            "(needs >= %d.%d)" % ("%d.%d" % version if version else "unknown version",
                                   MIN_VERSION[0], MIN_VERSION[1])
    else:
        found["auth"] = True
        found["skew"] = "--time-skew-threshold" in help_text
        # 3.17 and later: OAEP by default, PKCS#1 v1.5 on request; before: PKCS#1 v1.5 only.
        found["paddings"] = ["oaep", "pkcs1"] if "--use-pkcs1-padding" in help_text \
            else ["pkcs1"]
    _features[path] = found
    return found


def openssl_path():
    return shutil.which("openssl")


def can_run():
    """(True, None), or (False, reason) when this node's iperf3 could authenticate but the
    `openssl` command that makes each run's key pair is missing (for can-run)."""
    if features()["auth"] and not openssl_path():
        return False, ("the openssl command is not installed: it makes the key pair that limits "
                       "the dest's iperf3 server to the run's own client (install openssl)")
    return True, None


def new_key_pair():
    """(private PEM, public PEM): a fresh RSA key pair, through stdin/stdout only."""
    openssl = openssl_path()
    if not openssl:
        raise ValueError("the openssl command is not installed: cannot make the iperf3 key pair")
    status, private, err = _output([openssl, "genpkey", "-algorithm", "RSA", "-pkeyopt",
                                    "rsa_keygen_bits:%d" % KEY_BITS])
    if status != 0 or "PRIVATE KEY" not in private:
        raise ValueError("openssl genpkey failed: %s" % (err.strip() or "status %d" % status))
    status, public, err = _output([openssl, "pkey", "-pubout"], data=private)
    if status != 0 or "PUBLIC KEY" not in public:
        raise ValueError("openssl pkey -pubout failed: %s" % (err.strip() or "status %d" % status))
    return private, public


def participant_data(index):
    """What participant `index` adds to its participant data for a throughput phase."""
    local = features()
    if not local["auth"]:
        return {}
    if index == 0:
        return {"iperf3-auth": {"paddings": local["paddings"]}}
    private, public = new_key_pair()
    return {"iperf3-auth": {"username": USERNAME, "public-key": public,
                            "paddings": local["paddings"]},
            "_iperf3-key": private}


def password(token, secret=None):
    """The legs' password: keyed with the run's token and, since protocol 2, the secret the
    dest makes when its run starts and sends to the run's source address only (jumbo.tool.
    reflector_port): the token alone, which the task author can read, does not give it."""
    label = _PASSWORD_LABEL + (b" " + secret.encode("ascii") if secret else b"")
    return hmac.new(token.encode("utf-8"), label, hashlib.sha256).hexdigest()


def decide(data, secret=None):
    """(settings, None) when this run's legs authenticate, else (None, why not). Both runs
    decide alike from the same participant-data array and the run's secret."""
    data = data if isinstance(data, list) else []
    source = data[0] if data and isinstance(data[0], dict) else {}
    dest = data[1] if len(data) > 1 and isinstance(data[1], dict) else {}
    server, client = dest.get("iperf3-auth"), source.get("iperf3-auth")
    if not isinstance(server, dict) or not isinstance(server.get("public-key"), str):
        return None, "the dest's iperf3 cannot authenticate clients"
    if not isinstance(client, dict):
        return None, "the source's iperf3 cannot authenticate to a server"
    both = [p for p in ("oaep", "pkcs1")
            if p in (server.get("paddings") or []) and p in (client.get("paddings") or [])]
    if not both:
        return None, "the two iperf3 builds share no RSA padding"
    token = dest.get("_token")
    if not isinstance(token, str) or not token:
        return None, "no run token in the dest's participant data"
    return {"username": str(server.get("username") or USERNAME), "public-key": server["public-key"],
            "password": password(token, secret), "padding": both[0],
            "private-key": dest.get("_iperf3-key")}, None


def open_notes(why, address=None):
    """What a network peer can still do when the legs do not authenticate."""
    where = "on %s" % address if address else "on the dest"
    return ["iperf3 authentication is off (%s): during the slot anyone who can reach the "
            "iperf3 port %s can run tests against the server or end it early" % (why, where)]


def _memfd_create():
    """libc's memfd_create, or None (Python 3.6 has no os.memfd_create)."""
    try:
        function = ctypes.CDLL(None, use_errno=True).memfd_create
    except (OSError, AttributeError):
        return None
    function.argtypes = (ctypes.c_char_p, ctypes.c_uint)
    return function


def remove_stale_directories(parent=None, now=None):
    """Remove key directories a killed run of ours left in `parent` (TMPDIR's parent by
    default): ours (our uid), named like ours, older than STALE_SECONDS. Returns how many."""
    parent = parent or tempfile.gettempdir()
    now = time.time() if now is None else now
    removed = 0
    try:
        names = os.listdir(parent)
    except OSError:
        return 0
    for name in names:
        if not name.startswith(DIRECTORY_PREFIX):
            continue
        path = os.path.join(parent, name)
        try:
            info = os.lstat(path)
        except OSError:
            continue
        if info.st_uid == os.getuid() and os.path.isdir(path) and not os.path.islink(path) \
                and now - info.st_mtime > STALE_SECONDS:
            shutil.rmtree(path, ignore_errors=True)
            removed += 1
    return removed


class Credentials(object):
    """A context: `argv` (and `env`) for one iperf3, its files in memory (or 0600 in a fresh
    directory under TMPDIR), gone on exit. Empty when `settings` is None."""

    def __init__(self, settings, server, in_memory=True):
        self.settings = settings
        self.server = server
        self.argv, self.env, self.directory = [], None, None
        self.memfd = _memfd_create() if in_memory else None
        self.fds = []

    def __enter__(self):
        settings = self.settings
        if settings is None:
            return self
        local = features()
        if self.memfd is None:
            remove_stale_directories()
            self.directory = tempfile.mkdtemp(prefix=DIRECTORY_PREFIX)
        try:
            if self.server:
                if not isinstance(settings.get("private-key"), str):
                    raise ValueError("the dest's participant data lacks its iperf3 key")
                salted = "{%s}%s" % (settings["username"], settings["password"])
                users = "%s,%s\n" % (settings["username"],
                                     hashlib.sha256(salted.encode("utf-8")).hexdigest())
                self.argv = ["--rsa-private-key-path", self._write("key.pem", settings["private-key"]),
                             "--authorized-users-path", self._write("users.csv", users)]
                if local["skew"]:
                    self.argv += ["--time-skew-threshold", str(TIME_SKEW)]
            else:
                self.argv = ["--username", settings["username"], "--rsa-public-key-path",
                             self._write("public.pem", settings["public-key"])]
                self.env = dict(os.environ, IPERF3_PASSWORD=settings["password"])
            if settings["padding"] == "pkcs1" and "oaep" in local["paddings"]:
                self.argv.append("--use-pkcs1-padding")
        except BaseException:
            self.__exit__()
            raise
        return self

    def _write(self, name, text):
        if self.memfd is not None:
            fd = self.memfd(("jumbo-iperf3-" + name).encode("ascii"), MFD_CLOEXEC)
            if fd < 0:
                raise OSError(ctypes.get_errno(), "memfd_create failed")
            self.fds.append(fd)
            data = text.encode("utf-8")
            while data:
                data = data[os.write(fd, data):]
            # iperf3 (our child, same user) opens it anew through our /proc entry.
            return "/proc/%d/fd/%d" % (os.getpid(), fd)
        path = os.path.join(self.directory, name)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(text)
        return path

    def __exit__(self, *exc):
        for fd in self.fds:
            try:
                os.close(fd)
            except OSError:
                pass
        self.fds = []
        if self.directory:
            shutil.rmtree(self.directory, ignore_errors=True)
            self.directory = None
        return False


def bind_address(spec, version=None):
    """(address, None) the dest's server listens on, or (None, why it listens on all);
    `version`: the family, else the spec's ip-version, else the resolver's preference."""
    if version not in (4, 6):
        version = spec.ip_version if spec.ip_version in (4, 6) else None
    try:
        address, version = resolve(spec.dest, version)
    except (ResolveError, TypeError) as err:
        return None, "cannot resolve the dest here (%s)" % err
    family = socket.AF_INET6 if version == 6 else socket.AF_INET
    try:
        probe = socket.socket(family, socket.SOCK_STREAM)
    except OSError as err:
        return None, "no IPv%d socket here (%s)" % (version, err)
    try:
        probe.bind((address, 0))
    except OSError:
        return None, "the dest %s is not an address of this node (NAT?)" % address
    finally:
        probe.close()
    return address, None


def explain(result):
    """Say why a leg the dest refused failed (in place; `result` is run_legs' object)."""
    for run in (result or {}).get("runs") or []:
        if REFUSED in (run.get("error") or ""):
            run["error"] += (" (the dest refused this run's credentials: its clock differs from "
                             "this node's by more than %d s, or it was given other participant "
                             "data)" % TIME_SKEW)
    return result
