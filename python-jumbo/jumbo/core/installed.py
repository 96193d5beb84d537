"""Which plugin contract the installed pScheduler accepts, asked of the installed pScheduler.

The server validates every enumeration in its database trigger (test_alter, tool_alter,
archiver_alter) with its SQL function json_validate, which calls python-pscheduler's
`json_validate({"": enumeration}, {... "$ref": "#/pScheduler/PluginEnumeration/<Kind>"})`.
That very call, on this node's python-pscheduler (5.2: its built-in dictionary; 5.3: the
pscheduler-json-dictionary file it was built against), decides here: the first contract whose
enumeration it accepts is the node's. No package name or version string is read, so a mixed
install (a 5.3 dictionary under a 5.2 library, or the reverse) is answered in the shape the
server will accept. Without python-pscheduler (a build host, the suite's own tests) the answer
is contract 1, the released 5.2 line's.
"""

import importlib

# The plugin kinds of the dictionary's PluginEnumeration, by the suite's kind names.
_KINDS = {"test": "Test", "tool": "Tool", "archiver": "Archiver"}


def server_accepts(kind, enumeration):
    """(accepted, message) of the installed pScheduler's own enumeration check, or
    (None, why) when there is no python-pscheduler to ask (or asking it failed)."""
    # Imported here, by name, not at the top: python-pscheduler loads psycopg2, pyjq and more,
    # which only `enumerate` needs; every other method (can-run has 5 s) imports this module.
    try:
        pscheduler = importlib.import_module("pscheduler")
    except Exception as err:  # noqa: BLE001 - no (or a broken) python-pscheduler: not a node
        return None, "python-pscheduler is not importable: %s" % err
    skeleton = {
        "type": "object",
        "properties": {"": {"$ref": "#/pScheduler/PluginEnumeration/%s" % _KINDS[kind]}},
        "required": [""],
    }
    try:
        valid, message = pscheduler.json_validate({"": enumeration}, skeleton)
    except Exception as err:  # noqa: BLE001 - e.g. an unreadable dictionary file
        return None, "python-pscheduler's json_validate failed: %s: %s" % (
            type(err).__name__, err)
    return bool(valid), message


def contract_for(kind, candidates):
    """The contract of the installed pScheduler: the first of `candidates` ([(contract,
    enumeration)], newest first) its validator accepts; 1 when none is accepted or there is
    no validator to ask (the answer then fails loudly in the server's log, not here)."""
    for contract, enumeration in candidates:
        accepted, _message = server_accepts(kind, enumeration)
        if accepted:
            return contract
    return 1
