"""The `enumerate` method of every plugin of the suite, in the shape of the pScheduler that
calls it (jumbo.core.contract builds both shapes; jumbo.core.installed asks the installed
pScheduler's own validator which one it accepts). Contract 2 carries the spec's JSON schemas
(the suite's validators, annotated: jumbo.testtype.forms), their UI schemas and, for the
tests, the result's JSON schemas."""

from ..archive.archive_data import DATA_VERSIONS
from ..core import contract, installed
from ..core import schema as schemas
from ..testtype import forms

ARCHIVER_LABELS = {
    "_url": "Store URL (sqlite:///PATH or https://HOST:9200)", "timeout": "Request timeout",
    "verify-ssl": "Verify the store's TLS certificate", "ca-file": "CA bundle (PEM file)",
    "pscheduler-streams": "Also write perfSONAR's pscheduler_* layout",
}
ARCHIVER_GROUPS = [("Store", ["_url", "timeout"]),
                   ("TLS", ["verify-ssl", "ca-file"]),
                   ("perfSONAR archive", ["pscheduler-streams"])]


def _archiver_forms():
    json_schemas = dict((v, forms.annotated(s, {}, {})) for v, s in DATA_VERSIONS.items())
    for schema in json_schemas.values():
        for key, prop in schema["properties"].items():
            prop["title"] = ARCHIVER_LABELS.get(key, key)
    return json_schemas, dict((v, forms.ui_schema(s, ARCHIVER_GROUPS, ARCHIVER_LABELS))
                              for v, s in json_schemas.items())


def _schemas_of(kind, name):
    """(spec JSON schemas, UI schemas, result JSON schemas) of a plugin, by version."""
    if (kind, name) == ("test", "pmtu"):
        return forms.pmtu_forms() + (dict((v, schemas.result_schema(v))
                                          for v in schemas.RESULT_VERSIONS),)
    if (kind, name) == ("test", "jumbo-throughput"):
        return forms.pair_forms() + (dict((v, schemas.pair_result_schema(v))
                                          for v in schemas.PAIR_RESULT_VERSIONS),)
    if kind == "archiver":
        return _archiver_forms() + (None,)
    return None, None, None


def candidates(kind, name):
    """[(contract, enumeration)] of one plugin, newest contract first."""
    spec, uischema, result = _schemas_of(kind, name)
    return [(number, contract.enumeration(kind, name, number, spec, uischema, result))
            for number in sorted(contract.CONTRACTS, reverse=True)]


def enumerate_plugin(kind, name):
    """The enumeration the installed pScheduler accepts (contract 1 when none is installed)."""
    found = candidates(kind, name)
    wanted = installed.contract_for(kind, found)
    return dict(found)[wanted]

