"""jumbo.archive.urls: which store a URL names, and a URL fit for a message (a login the URL
holds never reaches a message, whatever shape the operator gave it)."""

import pytest

from jumbo.archive import urls

SCHEME_HINT = "(use sqlite:///PATH or http(s)://HOST:PORT)"


def test_the_default_store_is_the_nodes_sqlite_unless_the_environment_names_one(monkeypatch):
    monkeypatch.delenv(urls.DEFAULT_STORE_ENV, raising=False)
    assert urls.default_url() == "sqlite:////var/lib/jumbo/jumbo.db"
    monkeypatch.setenv("JUMBO_DEFAULT_STORE", "sqlite:////tmp/x.db")
    assert urls.default_url() == "sqlite:////tmp/x.db"
    monkeypatch.setenv("JUMBO_DEFAULT_STORE", "")
    assert urls.default_url() == urls.DEFAULT_STORE_URL


@pytest.mark.parametrize("url,shown", [
    ("https://user:pa/ss@host:9200/base?prefix=x", "https://***@host:9200/base?prefix=x"),
    ("https://a@b@c:1/x", "https://***@c:1/x"),
    ("https://u@h", "https://***@h"),
    # Without its `@`, user:password reads as host:port; the "port" and all after it go.
    ("https://user:SECRET", "https://user:***"),
    ("https://user:SECRET/more?x#y", "https://user:***"),
    ("user:SECRET@h", "***@h"),
    ("http://[fd00::1]:9200/x", "http://[fd00::1]:9200/x"),
    ("https://h:9200/base?prefix=jumbo", "https://h:9200/base?prefix=jumbo"),
    ("sqlite:////var/lib/jumbo/jumbo.db", "sqlite:////var/lib/jumbo/jumbo.db"),
    ("host:9200", "host:9200"),
])
def test_a_url_fit_for_a_message_hides_the_login(url, shown):
    assert urls.redact_url(url) == shown


@pytest.mark.parametrize("url,parts", [
    ("sqlite:///relative.db", ("sqlite", "", "/relative.db", None)),
    ("sqlite:////abs/path.db", ("sqlite", "", "//abs/path.db", None)),
    ("http://h:9200/p?prefix=a", ("http", "h", "/p", 9200)),
    ("https://user:pw@[fd00::1]", ("https", "fd00::1", "", None)),
])
def test_a_known_store_url_is_split(url, parts):
    split = urls.check_url(url)
    assert (split.scheme, split.hostname or "", split.path, split.port) == parts


@pytest.mark.parametrize("url,message", [
    ("", "store URL must be a non-empty string"),
    (None, "store URL must be a non-empty string"),
    (["sqlite:///x.db"], "store URL must be a non-empty string"),
    ("user:SECRET@host", "no store scheme in the URL " + SCHEME_HINT),
    ("ftp://h/x", "unknown store 'ftp' in URL 'ftp://h/x' " + SCHEME_HINT),
    ("ftp://me:SECRET@h/x", "unknown store 'ftp' in URL 'ftp://***@h/x' " + SCHEME_HINT),
    ("sqlite://h/x.db", "bad SQLite URL 'sqlite://h/x.db' "
                        "(use sqlite:///relative.db or sqlite:////abs/path.db)"),
    ("sqlite:///", "bad SQLite URL 'sqlite:///' "
                   "(use sqlite:///relative.db or sqlite:////abs/path.db)"),
    ("https://", "bad OpenSearch URL 'https://': no host"),
    ("https://h:port", "bad OpenSearch URL 'https://h:***': the port is not a number"),
    ("https://user:SECRET@h:port",
     "bad OpenSearch URL 'https://***@h:***': the port is not a number"),
    ("https://u:SECRET", "bad OpenSearch URL 'https://u:***': the port is not a number"),
    ("https://h:99999", "bad OpenSearch URL 'https://h:99999': the port is not a number"),
])
def test_an_unknown_or_broken_url_is_refused_without_its_login(url, message):
    with pytest.raises(ValueError) as caught:
        urls.check_url(url)
    assert str(caught.value) == message
    assert "SECRET" not in str(caught.value)


@pytest.mark.parametrize("scheme,host,has_login,refused", [
    ("http", "opensearch.example", True, True),
    ("http", "198.18.0.5", True, True),
    ("http", "localhost", True, True),  # a name may resolve anywhere
    ("http", "127.0.0.2", True, False),
    ("http", "::1", True, False),
    ("https", "opensearch.example", True, False),
    ("http", "opensearch.example", False, False),
    ("http", None, True, True),
])
def test_a_login_goes_over_plain_http_only_to_a_loopback_address(scheme, host, has_login,
                                                                   refused):
    problem = urls.plain_http_login_problem(scheme, host, has_login)
    if refused:
        assert problem == ("a login over plain http would travel in clear to %s: use an https "
                           "_url (only a loopback address may take a login over http)" % host)
    else:
        assert problem is None
