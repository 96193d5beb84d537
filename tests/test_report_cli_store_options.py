"""jumbo-report must read every archive the jumbo archiver can write: the archiver's store
takes a CA file, an API key and verify-ssl (jumbo.archive.archiver.store_options), so the
report takes the same options and passes them to the same OpenSearch client
(jumbo.archive.opensearch.store.OpenSearchStore).

The archive is a real OpenSearch; the HTTPS front end that checks the API key is the
archiver tests' FrontProxy (a named mock: the integ-test OpenSearch has neither TLS nor the
security plugin), with a real self-signed certificate made by openssl."""

import json
import uuid

import pytest

from fixtures import samples
from jumbo.report import cli
from jumbo.report.errors import ReportError
from jumbo.archive.stores import open_store
from opensearch_fixture import drop_prefix
from test_archive_archiver import FrontProxy, certificate  # noqa: F401 - certificate is a fixture pytest finds by name

API_KEY = "a2V5aWQ6c2VjcmV0"


def test_the_options_parse_and_are_checked(tmp_path):
    ca = tmp_path / "ca.pem"
    ca.write_text("not used: the parser only\n")
    key = tmp_path / "key"
    key.write_text(API_KEY + "\n")
    args = cli.parser().parse_args(["--store", "https://archive.example:9200", "--ca-file", str(ca),
                                    "--api-key-file", str(key), "--no-verify-ssl"])
    assert cli.store_options(args) == {"ca_file": str(ca), "api_key": API_KEY, "verify_ssl": False}
    bad = [
        (["--store", "https://a:9200", "--ca-file", str(tmp_path / "none.pem")], "no such file"),
        (["--store", "https://a:9200", "--api-key-file", str(tmp_path / "none")], "No such file"),
        (["--store", "https://a:9200", "--api-key-file", str(ca)], "one API key"),
        (["--store", "sqlite:///x.db", "--api-key-file", str(key)], "OpenSearch store"),
        (["--store", "http://a:9200", "--ca-file", str(ca)], "https://"),
    ]
    for argv, message in bad:
        with pytest.raises(ReportError) as err:
            cli.store_options(cli.parser().parse_args(argv))
        assert message in str(err.value) and err.value.status == 2


def test_the_report_reads_an_https_archive_with_a_ca_file_and_an_api_key(
        opensearch_url, certificate, tmp_path, capsys):  # noqa: F811 - the fixture imported above
    cert, key = certificate
    prefix = "ro%s_" % uuid.uuid4().hex[:8]
    store = open_store("%s/?prefix=%s" % (opensearch_url, prefix))
    envelopes = [samples.pmtu_envelope(i, dest="ps-report-%d" % i) for i in range(3)]
    assert not [o for o in store.put_many(envelopes) if o]
    store.refresh()
    proxy = FrontProxy(opensearch_url, "unused", "unused", certfile=cert, keyfile=key)
    proxy.expected = "ApiKey " + API_KEY
    key_file = tmp_path / "api-key"
    key_file.write_text(API_KEY + "\n")
    wrong_key = tmp_path / "wrong-key"
    wrong_key.write_text("d3Jvbmc6a2V5\n")
    url = "%s/?prefix=%s" % (proxy.url, prefix)
    out = str(tmp_path / "report.json")

    def report(*options):
        capsys.readouterr()
        status = cli.main(["--store", url, "--format", "json", "--out", out] + list(options))
        return status, capsys.readouterr().err

    try:
        status, err = report("--api-key-file", str(key_file))         # self-signed: refused
        assert status == 3 and "certificate verif" in err
        status, err = report("--api-key-file", str(wrong_key), "--ca-file", cert)
        assert status == 3 and "401" in err and "credentials" in err
        status, err = report("--ca-file", cert)                          # no key: refused
        assert status == 3 and "401" in err
        for options in (("--api-key-file", str(key_file), "--ca-file", cert),
                        ("--api-key-file", str(key_file), "--no-verify-ssl")):
            status, err = report(*options)
            assert (status, err) == (0, "")
            with open(out) as handle:
                written = json.load(handle)
            assert (written["window"]["results"], written["paths"], written["capable_paths"]) == (3, 3, 3)
    finally:
        proxy.close()
        drop_prefix(store, prefix)
