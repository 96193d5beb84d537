"""jumbo-report must read every archive the jumbo archiver can write: the archiver's store
takes a CA file, an API key and verify-ssl (jumbo.stores.archiver.store_options), so the
report needs the same options, passed to the same OpenSearch client."""

import pytest

from jumbo.report import cli


@pytest.mark.xfail(strict=True, raises=cli.ReportError,
                   reason="jumbo/report/queries_opensearch.py (issue 17's file) builds its own "
                   "HTTP client with neither a CA file nor an API key; once it reads through "
                   "jumbo.stores.opensearch's client, report/cli.py gains these options and "
                   "this mark goes.")
def test_the_report_takes_the_archivers_tls_and_api_key_options(tmp_path):
    ca = tmp_path / "ca.pem"
    ca.write_text("not used: the parser only\n")
    args = cli.parser().parse_args(["--store", "https://archive.example:9200", "--ca-file", str(ca),
                                    "--api-key-file", str(ca), "--no-verify-ssl"])
    assert args.ca_file == str(ca)
