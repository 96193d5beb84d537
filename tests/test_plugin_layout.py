"""The plugin method files stay thin: each imports only the plugin-protocol layer
(jumbo.protocol) and makes one call into its plugin's module there, which exists. Logic that
creeps back into a method file, or a method whose protocol function vanished, fails here."""

import ast
import glob
import importlib
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PLUGINS = {"pscheduler-test-pmtu/pmtu": "pmtu",
           "pscheduler-test-jumbo-throughput/jumbo-throughput": "jumbo_throughput",
           "pscheduler-tool-jumbocheck/jumbocheck": "jumbocheck",
           "pscheduler-archiver-jumbo/jumbo": "archiver"}
# enumerate is Python since issue 30 (its shape depends on the installed pScheduler)
EXPECTED = {"pmtu": 7, "jumbo_throughput": 7, "jumbocheck": 6, "archiver": 3}


def _methods():
    found = []
    for folder, module in sorted(PLUGINS.items()):
        for path in sorted(glob.glob(os.path.join(ROOT, folder, "*"))):
            with open(path) as handle:
                first = handle.readline()
            if "python" in first:
                found.append((module, path))
    return found


def test_every_plugin_has_its_python_methods():
    counts = {}
    for module, _path in _methods():
        counts[module] = counts.get(module, 0) + 1
    assert counts == EXPECTED


@pytest.mark.parametrize("module,path", _methods(),
                         ids=[os.path.relpath(p, ROOT) for _m, p in _methods()])
def test_method_file_is_one_call_into_the_protocol_layer(module, path):
    with open(path) as handle:
        tree = ast.parse(handle.read(), path)
    imported = [node for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))]
    sources = set()
    for node in imported:
        if isinstance(node, ast.ImportFrom):
            sources.add(node.module)
        else:
            sources.update(alias.name for alias in node.names)
    assert sources <= {"sys", "jumbo.protocol"}, sources
    # the body: docstring, imports, the one guarded import (try), then exactly one statement
    tries = [node for node in tree.body if isinstance(node, ast.Try)]
    assert len(tries) == 1
    for node in tries[0].body:
        assert isinstance(node, (ast.Import, ast.ImportFrom)) or (
            isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
            and ast.dump(node.value.func) == ast.dump(ast.parse("terminate.defer").body[0].value)), \
            ast.dump(node)[:80]
    body = [node for node in tree.body
            if not (isinstance(node, ast.Expr) and not isinstance(node.value, ast.Call))
            and not isinstance(node, (ast.Import, ast.ImportFrom, ast.Try))]
    assert len(body) == 1, [ast.dump(node)[:80] for node in body]
    assert not [node for node in ast.walk(tree)
                if isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.For, ast.While, ast.If))]
    # the call names a function of this plugin's protocol module, and it exists
    calls = [node.func.attr for node in ast.walk(body[0])
             if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
             and isinstance(node.func.value, ast.Name) and node.func.value.id == module]
    assert len(calls) == 1, calls
    protocol = importlib.import_module("jumbo.protocol." + module)
    assert callable(getattr(protocol, calls[0], None)), (module, calls[0])
