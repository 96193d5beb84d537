"""jumbo.core.installed: the contract is the first candidate the node's own python-pscheduler
accepts; with no python-pscheduler (a build host) or a broken one, contract 1.

The real validators (5.2.5 and 5.3-dev built from upstream's tarballs) answer in
tests/test_core_contract.py; here a `pscheduler` module written to a temporary directory
stands in for python-pscheduler's one function the module calls, json_validate(instance,
skeleton) -> (valid, message), so each branch of the decision is seen."""

import sys

import pytest

from jumbo.core import installed

STANDIN = '''
SEEN = []

def json_validate(instance, skeleton):
    SEEN.append((instance, skeleton))
    %s
'''


@pytest.fixture
def node(tmp_path, monkeypatch):
    """Install a python-pscheduler stand-in whose json_validate runs `body`."""
    def install(body):
        (tmp_path / "pscheduler.py").write_text(STANDIN % body)
        monkeypatch.syspath_prepend(str(tmp_path))
        monkeypatch.delitem(sys.modules, "pscheduler", raising=False)
        import pscheduler
        return pscheduler
    yield install
    sys.modules.pop("pscheduler", None)


def test_without_python_pscheduler_nothing_is_accepted_and_the_contract_is_1(monkeypatch):
    monkeypatch.setitem(sys.modules, "pscheduler", None)  # import raises ImportError
    accepted, why = installed.server_accepts("tool", {"name": "jumbocheck"})
    assert accepted is None and why.startswith("python-pscheduler is not importable")
    assert installed.contract_for("tool", [(2, {"label": "x"}), (1, {})]) == 1


def test_the_servers_call_is_asked_with_the_dictionarys_enumeration_reference(node):
    pscheduler = node('return "label" in instance[""], "no label"')
    assert installed.server_accepts("archiver", {"label": "J"}) == (True, "no label")
    instance, skeleton = pscheduler.SEEN[-1]
    assert instance == {"": {"label": "J"}}
    assert skeleton == {"type": "object", "required": [""], "properties": {
        "": {"$ref": "#/pScheduler/PluginEnumeration/Archiver"}}}
    installed.server_accepts("test", {})
    assert pscheduler.SEEN[-1][1]["properties"][""]["$ref"].endswith("/Test")


def test_the_first_accepted_candidate_is_the_contract(node):
    node('return "label" in instance[""], "needs a label"')
    newest_first = [(2, {"label": "J", "name": "jumbo"}), (1, {"name": "jumbo"})]
    assert installed.contract_for("archiver", newest_first) == 2
    node('return "label" not in instance[""], "label not allowed"')
    assert installed.contract_for("archiver", newest_first) == 1
    # Accepted by none: 1, and the server's log says why.
    node('return False, "refused"')
    assert installed.contract_for("archiver", newest_first) == 1
    # A truthy non-bool from the validator is a yes, and said so as a bool.
    node('return 1, None')
    accepted, message = installed.server_accepts("tool", {})
    assert accepted is True and message is None


def test_a_validator_that_breaks_is_no_answer(node):
    node('raise IOError("cannot read /usr/share/pscheduler/dictionary")')
    accepted, why = installed.server_accepts("test", {"name": "pmtu"})
    assert accepted is None
    assert why == ("python-pscheduler's json_validate failed: OSError: "
                   "cannot read /usr/share/pscheduler/dictionary")
    assert installed.contract_for("test", [(2, {}), (1, {})]) == 1
