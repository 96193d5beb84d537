"""The task forms 5.3's web interface builds from the pmtu and jumbo-throughput enumerations
(jumbo.testtype.forms): every spec member on the form exactly once, in a labelled group, with
the CLI's help text; the form's defaults are the pSConfig template's task settings; and the
annotated schemas accept and refuse exactly what the suite's validators do."""

import json
import os

import pytest

from jumbo.core import schema as schemas
from jumbo.core import validate as validation
from jumbo.testtype import forms

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TEMPLATE = os.path.join(ROOT, "psconfig", "lhcone-jumbo-mesh.json")
CASES = [("pmtu", forms.pmtu_forms, schemas.spec_schema, "pmtu-v4"),
         ("jumbo-throughput", forms.pair_forms, schemas.pair_spec_schema, "jumbo-throughput-v4")]


def controls(ui):
    for group in ui["elements"]:
        assert group["type"] == "Group" and group["label"], group
        for control in group["elements"]:
            yield control


@pytest.mark.parametrize("test,make,schema_of,template_test", CASES)
def test_every_member_is_on_the_form_once_with_label_and_help(test, make, schema_of,
                                                            template_test):
    json_schemas, ui_schemas = make()
    for version, ui in ui_schemas.items():
        scopes = [c["scope"] for c in controls(ui)]
        members = set(schema_of(version)["properties"]) - {"schema"}
        assert sorted(scopes) == sorted("#/properties/" + m for m in members), test
        for control in controls(ui):
            key = control["scope"].rsplit("/", 1)[1]
            assert control["label"] == json_schemas[version]["properties"][key]["title"]
            assert control["options"]["help"], control


@pytest.mark.parametrize("test,make,schema_of,template_test", CASES)
def test_the_forms_defaults_are_the_templates_settings(test, make, schema_of, template_test):
    with open(TEMPLATE) as handle:
        spec = json.load(handle)["tests"][template_test]["spec"]
    json_schemas, _ui = make()
    defaults = dict((key, prop["default"]) for key, prop
                    in json_schemas[1]["properties"].items() if "default" in prop)
    templated = dict((k, v) for k, v in spec.items()
                     if k not in ("source", "dest", "ip-version"))
    assert defaults == templated


@pytest.mark.parametrize("test,make,schema_of,template_test", CASES)
def test_annotations_change_no_verdict(test, make, schema_of, template_test):
    json_schemas, _ui = make()
    specs = [{"dest": "b"}, {"dest": "b", "flows": 0}, {"dest": "b", "flows": 40},
             {"dest": "b", "order": "ba"}, {"dest": "b", "duration": "PT7S"}, {"source": "a"},
             {"dest": "b", "extra": 1}, {"dest": "b", "timeout": "1s"}]
    for spec in specs:
        assert validation.check(spec, json_schemas[1])[0] == \
            validation.check(spec, schema_of(1))[0], spec
