"""jumbo.report.actions_options: jumbo-report's --owners, --no-resolve, --resolve-budget and
--target-date, and the Actions hook they make. Parsed by a real argparse parser with only
these options; the owners file is a real file; JUMBO_NO_RESOLVE is set per test (the suite
sets it to 1 for every test, so each test here says what it wants)."""

import argparse
import json

import pytest

from jumbo.core.errors import JumboError
from jumbo.report import actions_options
from jumbo.report.actions import Actions
from jumbo.report.errors import ReportError


def parse(*argv):
    parser = argparse.ArgumentParser(prog="jumbo-report")
    actions_options.add_arguments(parser)
    return parser.parse_args(list(argv))


def test_the_defaults_resolve_within_two_seconds_with_no_owners_or_dates(monkeypatch):
    monkeypatch.delenv("JUMBO_NO_RESOLVE", raising=False)
    args = parse()
    assert (args.owners, args.resolve, args.resolve_budget, args.target_date) == (
        None, True, 2.0, None)
    hook = actions_options.hook(args)
    assert isinstance(hook, Actions)
    assert hook.owners is None and hook.dates == {}
    assert hook.resolver is not None and hook.resolver.budget == 2.0


@pytest.mark.parametrize("argv,env,resolves", [
    ((), "", True), ((), "0", True), ((), "1", False), ((), "yes", False),
    (("--no-resolve",), "", False), (("--no-resolve",), "0", False)])
def test_no_resolve_by_option_or_environment(monkeypatch, argv, env, resolves):
    monkeypatch.setenv("JUMBO_NO_RESOLVE", env)
    hook = actions_options.hook(parse(*argv))
    assert (hook.resolver is not None) is resolves


def test_the_budget_and_the_dates_given_reach_the_hook(monkeypatch):
    monkeypatch.setenv("JUMBO_NO_RESOLVE", "0")
    hook = actions_options.hook(parse("--resolve-budget", "0.5", "--target-date",
                                      "DC26=2027-02-15", "--target-date", "DC28=2028-06-30"))
    assert hook.resolver.budget == 0.5
    assert hook.dates == {"DC26": "2027-02-15", "DC28": "2028-06-30"}


def test_the_owners_file_is_read_into_a_longest_prefix_map(tmp_path):
    owners = tmp_path / "owners.json"
    owners.write_text(json.dumps({"prefixes": [
        {"prefix": "198.18.0.0/16", "site": "WIDE"},
        {"prefix": "198.18.5.0/24", "site": "SITE-E", "as": 64500, "owner": "Site E NOC"},
        {"prefix": "fd00:5::/32", "site": "SITE-E6"}]}))
    hook = actions_options.hook(parse("--owners", str(owners), "--no-resolve"))
    assert len(hook.owners) == 3
    assert hook.owners.lookup("198.18.5.2")["site"] == "SITE-E"
    assert hook.owners.lookup("198.18.9.2")["site"] == "WIDE"
    assert hook.owners.lookup("fd00:5::9")["site"] == "SITE-E6"
    assert hook.owners.lookup("192.0.2.1") is None


@pytest.mark.parametrize("argv,words", [
    (("--resolve-budget", "0"), "--resolve-budget must be above 0 and at most 30 seconds"),
    (("--resolve-budget", "31"), "--resolve-budget must be above 0 and at most 30 seconds"),
    (("--resolve-budget", "-1"), "--resolve-budget must be above 0"),
    (("--target-date", "DC27=2027-01-01"), "expected NAME=YYYY-MM-DD with NAME one of DC26, DC28"),
    (("--target-date", "DC26=2026-02-30"), "no such date"),
    (("--target-date", "DC26"), "expected NAME=YYYY-MM-DD"),
])
def test_a_bad_option_is_a_report_error_naming_it(monkeypatch, argv, words):
    monkeypatch.setenv("JUMBO_NO_RESOLVE", "0")
    with pytest.raises(ReportError) as caught:
        actions_options.hook(parse(*argv))
    assert words in str(caught.value)
    assert isinstance(caught.value, JumboError)


def test_a_missing_or_bad_owners_file_is_a_report_error(tmp_path):
    with pytest.raises(ReportError, match="no such file"):
        actions_options.hook(parse("--owners", str(tmp_path / "absent.json"), "--no-resolve"))
    bad = tmp_path / "owners.json"
    bad.write_text('{"prefixes": [{"prefix": "300.1.1.0/24", "site": "X"}]}')
    with pytest.raises(ReportError, match="'prefix' must be"):
        actions_options.hook(parse("--owners", str(bad), "--no-resolve"))


def test_a_budget_that_is_not_a_number_is_refused_by_the_parser(capsys):
    with pytest.raises(SystemExit) as caught:
        parse("--resolve-budget", "soon")
    assert caught.value.code == 2
    assert "--resolve-budget" in capsys.readouterr().err
