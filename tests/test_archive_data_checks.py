"""jumbo.archive.data_checks: the archive data's checks that depend on the node, each None or
"At /<field>: <why>" (data-is-valid answers with it, so a task is refused at once)."""

import os
import ssl
import subprocess

import pytest

from jumbo.archive import data_checks
from jumbo.core import limits


def test_a_store_under_an_allowed_directory_is_accepted(sqlite_policy):
    assert data_checks.sqlite_problem("sqlite:///%s/mine.db" % sqlite_policy) is None
    assert data_checks.sqlite_problem(None) is None  # the default store


def test_a_store_elsewhere_is_refused_naming_the_policy(sqlite_policy, tmp_path):
    problem = data_checks.sqlite_problem("sqlite:///%s/elsewhere.db" % tmp_path)
    assert problem == ("At /_url: SQLite stores may only live under %s (sqlite-directories in "
                       "%s), not %s/elsewhere.db" % (sqlite_policy, tmp_path / "jumbo-limits.conf",
                                                     tmp_path))


def test_a_way_out_of_the_allowed_directory_is_refused(sqlite_policy, tmp_path):
    escape = "sqlite:///%s/../elsewhere.db" % sqlite_policy
    assert data_checks.sqlite_problem(escape).startswith("At /_url: SQLite stores may only live")
    os.symlink(str(tmp_path), str(sqlite_policy / "link"))
    through = "sqlite:///%s/link/elsewhere.db" % sqlite_policy
    assert data_checks.sqlite_problem(through).startswith("At /_url: SQLite stores may only live")
    assert data_checks.sqlite_problem("sqlite:///%s" % sqlite_policy) == (
        "At /_url: %s is a directory, not a store file" % sqlite_policy)
    assert data_checks.sqlite_problem("sqlite:///file:%s/x.db?mode=rw" % sqlite_policy).startswith(
        "At /_url: file:")


def test_an_unreadable_limits_file_is_the_problem(tmp_path, monkeypatch):
    conf = tmp_path / "jumbo-limits.conf"
    conf.write_text("{not json")
    monkeypatch.setenv(limits.LIMITS_ENV, str(conf))
    monkeypatch.delenv(limits.SQLITE_DIRS_ENV, raising=False)
    problem = data_checks.sqlite_problem("sqlite:///%s/x.db" % tmp_path)
    assert problem.startswith("At /_url: ") and str(conf) in problem


@pytest.fixture(scope="module")
def ca_bundle(tmp_path_factory):
    """A real self-signed CA certificate made by openssl."""
    work = tmp_path_factory.mktemp("ca")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=jumbo test CA", "-keyout", str(work / "ca.key"),
                    "-out", str(work / "ca.pem")], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, timeout=120)
    return work / "ca.pem"


def test_a_readable_ca_bundle_is_accepted(ca_bundle):
    assert data_checks.ca_file_problem(str(ca_bundle)) is None
    # What the check accepts, the archive's TLS context loads.
    ssl.create_default_context(cafile=str(ca_bundle))


def test_a_ca_bundle_that_cannot_serve_is_named(tmp_path, ca_bundle):
    missing = tmp_path / "none.pem"
    assert data_checks.ca_file_problem(str(missing)) == (
        "At /ca-file: %s does not exist on this node" % missing)
    assert data_checks.ca_file_problem(str(tmp_path)) == (
        "At /ca-file: %s is a directory, not a CA bundle file" % tmp_path)
    garbage = tmp_path / "garbage.pem"
    garbage.write_text("-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n")
    problem = data_checks.ca_file_problem(str(garbage))
    assert problem.startswith("At /ca-file: %s is not a usable CA bundle (" % garbage), problem
    key_only = ca_bundle.parent / "ca.key"
    assert data_checks.ca_file_problem(str(key_only)).startswith(
        "At /ca-file: %s is not a usable CA bundle (" % key_only)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_a_ca_bundle_the_archivers_user_cannot_read_is_named(tmp_path, ca_bundle):
    locked = tmp_path / "locked.pem"
    locked.write_bytes(ca_bundle.read_bytes())
    locked.chmod(0)
    assert data_checks.ca_file_problem(str(locked)) == (
        "At /ca-file: %s cannot be read by the archiver's user" % locked)


LOGIN_REFUSED = ("a login over plain http would travel in clear to %s: use an https _url "
                 "(only a loopback address may take a login over http)")


@pytest.mark.parametrize("url,data,problem", [
    ("http://os.example:9200", {"_auth": "Basic x"}, "At /_auth: " + LOGIN_REFUSED % "os.example"),
    ("http://os.example:9200", {"_api-key": "k"}, "At /_api-key: " + LOGIN_REFUSED % "os.example"),
    ("http://u:p@os.example:9200", {}, "At /_url: " + LOGIN_REFUSED % "os.example"),
    ("http://[fd00::9]:9200", {"_auth": "x"}, "At /_auth: " + LOGIN_REFUSED % "fd00::9"),
    ("https://u:p@os.example:9200", {"_auth": "x", "_api-key": "k"}, None),
    ("http://127.0.0.1:9200", {"_auth": "x"}, None),
    ("http://u:p@[::1]:9200", {}, None),
    ("http://os.example:9200", {"_url": "x"}, None),
])
def test_a_login_is_refused_over_plain_http_to_another_host(url, data, problem):
    assert data_checks.plain_http_login_problem(url, data) == problem


@pytest.mark.parametrize("sqlite_policy,problem", [
    (None, None), ([], None),
    ([{"wait": "PT1M"}, {"wait": "P1D"}], None),
    ([{"wait": "PT1M"}, {"wait": "PT0S"}], "At /retry-policy/1/wait: must be longer than PT0S"),
    ([{"wait": "soon"}], "At /retry-policy/0/wait: must be longer than PT0S"),
    ([{"wait": "P1D"}, {"wait": "P2DT1S"}], "At /retry-policy/1/wait: must be at most P2D"),
    ([{"wait": "P2D"}], None),
])
def test_a_retry_policys_waits_are_bounded(sqlite_policy, problem):
    assert data_checks.retry_policy_problem(sqlite_policy, 2 * 86400) == problem
