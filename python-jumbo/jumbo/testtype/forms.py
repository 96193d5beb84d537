"""What pScheduler 5.3's web interface builds the pmtu and jumbo-throughput task forms from:
each spec version's JSON schema, annotated for a form, and its UI schema (JSON Forms, the
format of upstream's spec-uischema.json files: layouts, Groups, Controls with a scope).

The JSON schemas are the suite's own validators (jumbo.core.schema), not a second copy: only
annotations a validator ignores are added (title, description, default), so the form accepts
exactly what spec-is-valid accepts. The help texts are the options' help of `pscheduler task
pmtu|jumbo-throughput --help` (one wording for the CLI and the form); the form's defaults are
the values the suite's pSConfig template (psconfig/lhcone-jumbo-mesh.json) gives its tasks, so
an operator who opens a new task gets the mesh's settings (tests/test_testtype_forms.py holds the two
to each other).
"""

import copy

from . import pair, spec as specs
from ..core import schema as schemas

# Labels an operator reads on the form, by spec key (both tests).
LABELS = {
    "source": "Source", "source-node": "Source pScheduler node",
    "dest": "Destination", "dest-node": "Destination pScheduler node",
    "ip-version": "IP version", "target-mtu": "Target MTU (bytes)",
    "max-mtu": "Largest size to probe (bytes)", "min-mtu": "Smallest size to probe (bytes)",
    "flows": "Flows (ECMP paths)", "hops": "Per-hop MTU", "reverse": "Also measure the reverse path",
    "reflector": "Probe through the destination's reflector",
    "timeout": "Probe answer timeout", "duration": "Leg duration", "omit": "Slow start omitted",
    "rounds": "ABBA rounds", "parallel": "Parallel streams", "congestion": "TCP congestion control",
    "direction": "Direction", "order": "Leg order", "fq-rate": "Pacing rate per stream (bit/s)",
    "port": "iperf3 port",
}

# (group label, spec keys) in the order an operator fills a form: where, what, how.
PMTU_GROUPS = [
    ("Endpoints", ["source", "dest", "ip-version", "source-node", "dest-node"]),
    ("Measurement", ["target-mtu", "flows", "reflector", "reverse", "hops"]),
    ("Probe limits", ["timeout", "max-mtu", "min-mtu"]),
]
PAIR_GROUPS = [
    ("Endpoints", ["source", "dest", "ip-version", "source-node", "dest-node"]),
    ("Legs", ["duration", "omit", "rounds", "direction", "order"]),
    ("TCP", ["parallel", "congestion", "fq-rate", "port"]),
    ("Path MTU probe", ["timeout"]),
]

# The pSConfig template's task settings (psconfig/lhcone-jumbo-mesh.json), the form's defaults.
PMTU_FORM_DEFAULTS = {"target-mtu": 9000, "flows": 40, "hops": False, "reverse": False,
                      "reflector": True, "timeout": "PT1S"}
PAIR_FORM_DEFAULTS = {"duration": "PT7S", "omit": "PT2S", "rounds": 1, "parallel": 1,
                      "direction": "forward", "order": "abba"}


def field_help(parser):
    """{spec key: help text} of a test's option parser (`--max-mtu` -> `max-mtu`)."""
    helps = {}
    for option in parser.option_list:
        name = option.get_opt_string()
        if name.startswith("--") and option.help and not option.help.startswith("SUPPRESS"):
            helps.setdefault(name[2:], option.help)
    return helps


def _widget(prop):
    """The input upstream's UI schemas use for a property of this type."""
    if "enum" in prop and prop.get("type") != "boolean":
        return "dropdown-single-select"
    return {"boolean": "input-checkbox", "integer": "input-number"}.get(
        prop.get("type"), "input-text")


def annotated(schema, helps, defaults):
    """A copy of the JSON schema `schema` with title, description and default on each
    top-level property (annotations: what it accepts is unchanged). A $ref'd property gets
    its type from the referenced definition for the widget only, not in the schema."""
    out = copy.deepcopy(schema)
    for key, prop in out["properties"].items():
        if key == "schema":
            continue
        prop["title"] = LABELS.get(key, key)
        if key in helps:
            prop["description"] = helps[key]
        if key in defaults:
            prop["default"] = defaults[key]
    return out


def _resolved(schema, prop):
    ref = prop.get("$ref", "")
    if ref.startswith("#/definitions/"):
        return schema["definitions"][ref.rsplit("/", 1)[1]]
    return prop


def ui_schema(schema, groups, labels=None):
    """The JSON Forms UI schema of `schema`: one Group per (label, keys), a Control per key
    (labelled from `labels`, default LABELS; help from the property's description)."""
    labels = LABELS if labels is None else labels
    elements = []
    for label, keys in groups:
        controls = []
        for key in keys:
            prop = _resolved(schema, schema["properties"][key])
            control = {"type": "Control", "scope": "#/properties/%s" % key,
                       "label": labels.get(key, key), "customComponent": _widget(prop)}
            if "description" in schema["properties"][key]:
                control["options"] = {"help": schema["properties"][key]["description"]}
            controls.append(control)
        elements.append({"type": "Group", "label": label, "elements": controls})
    return {"type": "VerticalLayout", "elements": elements}


def _forms(schema_of, versions, parser, groups, defaults):
    helps = field_help(parser)
    json_schemas, ui_schemas = {}, {}
    for version in versions:
        json_schemas[version] = annotated(schema_of(version), helps, defaults)
        ui_schemas[version] = ui_schema(json_schemas[version], groups)
    return json_schemas, ui_schemas


def pmtu_forms():
    """({version: annotated spec JSON schema}, {version: UI schema}) of the pmtu test."""
    return _forms(schemas.spec_schema, schemas.SPEC_VERSIONS, specs.option_parser(),
                  PMTU_GROUPS, PMTU_FORM_DEFAULTS)


def pair_forms():
    """({version: annotated spec JSON schema}, {version: UI schema}) of jumbo-throughput."""
    return _forms(schemas.pair_spec_schema, schemas.PAIR_SPEC_VERSIONS, pair.option_parser(),
                  PAIR_GROUPS, PAIR_FORM_DEFAULTS)
