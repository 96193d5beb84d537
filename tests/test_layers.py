"""The library's layers, as data (issue 24): every module's imports read with `ast`.

A module of one layer imports only from the layers below it: never from a layer above,
never sideways between the two peers of one layer, never in a circle, never inside a
function; and no module uses another module's private name (`from x import _y`,
`import x` then `x._y`, relative imports too). Every violation is listed with its file and
line, not only the first one."""

import ast
import os
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIBRARY = os.path.join(ROOT, "python-jumbo")
PACKAGE = "jumbo"

# Lowest first. A layer is a tuple of peers: subpackages of jumbo that do not import each
# other. The package's own __init__ (the version) sits below them all.
LAYERS = [
    ("core",),              # primitives: mtu, units, resolve, schema, validate, limits, spec
    ("probe", "archive"),   # sockets -> search -> engine | record, stores, queries, state
    ("tool", "report"),     # runner, throughput, reverse, reflector | report, alarms
    ("testtype",),          # the pScheduler test types: spec, participants, rendering
    ("protocol",),          # plugin method entry points and console-script mains
]

# Pairs (importer, imported) of subpackages that must not meet although the layers allow it:
# a pScheduler test (what is measured, its spec, its result, its slot rule) is independent of
# the tools that run it, so the test types read their definition from core, never from tool.
APART = [("testtype", "tool")]

# The methods namedtuple classes offer under underscore names: public API, not private.
NAMEDTUPLE_API = {"_make", "_replace", "_asdict", "_fields", "_field_defaults"}


def layer_of(module):
    """(level, subpackage) of a dotted module name; level -1 for the package itself, None
    for a subpackage that is in no layer."""
    parts = module.split(".")
    if len(parts) == 1:
        return -1, None
    for level, peers in enumerate(LAYERS):
        if parts[1] in peers:
            return level, parts[1]
    return None, parts[1]


def is_private(name):
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


class Module(object):
    """One library file: its dotted name, path (relative to the repository) and tree."""

    def __init__(self, library, path):
        relative = os.path.relpath(path, library)
        parts = relative[:-len(".py")].split(os.sep)
        self.is_package = parts[-1] == "__init__"
        if self.is_package:
            parts = parts[:-1]
        self.name = ".".join(parts)
        self.path = os.path.relpath(path, os.path.dirname(library))
        with open(path) as handle:
            self.tree = ast.parse(handle.read(), path)

    def where(self, node):
        return "%s:%d" % (self.path, node.lineno)

    def package(self):
        return self.name if self.is_package else self.name.rpartition(".")[0]


def load(library=LIBRARY, package=PACKAGE):
    modules = {}
    for directory, _, files in os.walk(os.path.join(library, package)):
        for name in sorted(files):
            if name.endswith(".py"):
                module = Module(library, os.path.join(directory, name))
                modules[module.name] = module
    return modules


def absolute(module, node):
    """The dotted module an ImportFrom names (relative ones resolved)."""
    if not node.level:
        return node.module
    base = module.package().split(".")
    if node.level > 1:
        base = base[:len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def in_functions(tree):
    """The import nodes inside a function (or lambda) body."""
    found = []

    def visit(node, inside):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)) and inside:
                found.append(child)
            visit(child, inside or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                      ast.Lambda)))
    visit(tree, False)
    return found


class Imports(object):
    """Every import of the library's modules: edges (importer, imported, node) to library
    modules, and the local names bound to library modules or to their members."""

    def __init__(self, modules, package=PACKAGE):
        self.modules = modules
        self.package = package
        self.edges = []          # (module, target module name, node)
        self.names = {}          # module name -> {local name: ("module", m) | ("member", m, n)}
        self.from_private = []   # (module, node, source, name)
        for module in modules.values():
            self._read(module)

    def _ours(self, name):
        return name == self.package or name.startswith(self.package + ".")

    def _read(self, module):
        bound = self.names.setdefault(module.name, {})
        for node in ast.walk(module.tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if not self._ours(alias.name):
                        continue
                    self.edges.append((module, alias.name, node))
                    if alias.asname:
                        bound[alias.asname] = ("module", alias.name)
                    else:
                        top = alias.name.split(".")[0]
                        bound[top] = ("module", top)
            elif isinstance(node, ast.ImportFrom):
                source = absolute(module, node)
                if not source or not self._ours(source):
                    continue
                for alias in node.names:
                    local = alias.asname or alias.name
                    full = "%s.%s" % (source, alias.name)
                    if full in self.modules:
                        self.edges.append((module, full, node))
                        bound[local] = ("module", full)
                    else:
                        self.edges.append((module, source, node))
                        bound[local] = ("member", source, alias.name)
                    if is_private(alias.name) and source != module.name:
                        self.from_private.append((module, node, source, alias.name))


# ------------------------------------------------------------------------------------------
# The four rules: each returns a list of "path:line: message" strings

def layer_violations(imports):
    found = []
    for module, target, node in imports.edges:
        level, sub = layer_of(module.name)
        target_level, target_sub = layer_of(target)
        if level is None:
            found.append("%s: %s is in no layer (add jumbo.%s to LAYERS)"
                         % (module.where(node), module.name, sub))
        elif target_level is None:
            found.append("%s: %s imports %s, which is in no layer"
                         % (module.where(node), module.name, target))
        elif target_level > level:
            found.append("%s: %s (%s) imports %s from a higher layer (%s)"
                         % (module.where(node), module.name, sub or "jumbo", target,
                            target_sub))
        elif target_level == level and target_sub != sub:
            found.append("%s: %s (%s) imports %s from its peer %s"
                         % (module.where(node), module.name, sub, target, target_sub))
    return sorted(set(found))


def apart_violations(imports):
    found = []
    for module, target, node in imports.edges:
        _, sub = layer_of(module.name)
        _, target_sub = layer_of(target)
        if (sub, target_sub) in APART:
            found.append("%s: %s imports %s: %s imports nothing from %s"
                         % (module.where(node), module.name, target, sub, target_sub))
    return sorted(set(found), key=_by_place)


def circles(imports):
    """Every strongly connected group of modules (imports inside functions included: they
    hide a circle, they do not remove it), with the imports that close it."""
    graph = {}
    lines = {}
    for module, target, node in imports.edges:
        if target == module.name or target not in imports.modules:
            continue
        graph.setdefault(module.name, set()).add(target)
        lines.setdefault((module.name, target), []).append(module.where(node))
    index, low, stack, on_stack, groups = {}, {}, [], set(), []

    def connect(name):  # Tarjan's strongly connected components
        index[name] = low[name] = len(index)
        stack.append(name)
        on_stack.add(name)
        for target in sorted(graph.get(name, ())):
            if target not in index:
                connect(target)
                low[name] = min(low[name], low[target])
            elif target in on_stack:
                low[name] = min(low[name], index[target])
        if low[name] == index[name]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == name:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for name in sorted(imports.modules):
        if name not in index:
            connect(name)
    found = []
    for group in sorted(groups):
        closing = set("%s (%s -> %s)" % (where, a, b) for a in group for b in group
                      for where in lines.get((a, b), ()))
        found.append("circle between %s: %s" % (", ".join(group),
                                                "; ".join(sorted(closing, key=_by_place))))
    return found


def function_imports(modules):
    found = []
    for module in modules.values():
        for node in in_functions(module.tree):
            names = ", ".join(alias.name for alias in node.names)
            source = ("from %s%s import " % ("." * node.level, node.module or "")
                      if isinstance(node, ast.ImportFrom) else "import ")
            found.append("%s: %s inside a function" % (module.where(node), source + names))
    return sorted(found, key=_by_place)


def _chain(node):
    """(root name, [attributes]) of a dotted expression a.b.c; None if not one."""
    attributes = []
    while isinstance(node, ast.Attribute):
        attributes.insert(0, node.attr)
        node = node.value
    return (node.id, attributes) if isinstance(node, ast.Name) else None


def private_uses(imports):
    found = ["%s: %s uses %s's private %s (from-import)"
             % (module.where(node), module.name, source, name)
             for module, node, source, name in imports.from_private]
    for module in imports.modules.values():
        bound = imports.names.get(module.name, {})
        seen = set()
        for node in ast.walk(module.tree):
            if not isinstance(node, ast.Attribute) or id(node) in seen:
                continue
            chain = _chain(node)
            if not chain or chain[0] not in bound:
                continue
            # Mark the inner attributes of this chain: each chain is read once, whole.
            inner = node.value
            while isinstance(inner, ast.Attribute):
                seen.add(id(inner))
                inner = inner.value
            problem = _private_in_chain(imports, module, bound[chain[0]], chain[1])
            if problem:
                found.append("%s: %s uses %s" % (module.where(node), module.name, problem))
    found += _private_members(imports)
    return sorted(set(found), key=_by_place)


def _defined(tree, imported=True):
    """Every name a module defines or assigns: functions, classes, arguments, variables,
    attributes it sets (self._x = ...), and with `imported` the names it imports."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.attr)
        elif imported and isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return names


def _private_members(imports):
    """`obj._y` on an object (not self, cls or a module): a private name this module does
    not define but another library module does (a method or attribute of its class)."""
    defined = dict((name, _defined(module.tree, False))
                   for name, module in imports.modules.items())
    found = []
    for module in imports.modules.values():
        bound = imports.names.get(module.name, {})
        own = _defined(module.tree)
        for node in ast.walk(module.tree):
            if not (isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load)
                    and is_private(node.attr) and node.attr not in own
                    and node.attr not in NAMEDTUPLE_API):
                continue
            root = _chain(node)
            if root and (root[0] in ("self", "cls") or root[0] in bound):
                continue
            owners = sorted(name for name, names in defined.items()
                            if name != module.name and node.attr in names)
            if owners:
                found.append("%s: %s uses %s, private to %s" % (
                    module.where(node), module.name, node.attr, " / ".join(owners)))
    return found


def _private_in_chain(imports, module, binding, attributes):
    """The first private name of another module reached along `attributes`, or None."""
    if binding[0] == "member":
        owner, current = binding[1], "%s.%s" % (binding[1], binding[2])
        kind = "member"
    else:
        owner, current, kind = binding[1], binding[1], "module"
    for attribute in attributes:
        if kind == "module" and "%s.%s" % (current, attribute) in imports.modules:
            current = owner = "%s.%s" % (current, attribute)
            continue
        if is_private(attribute) and owner != module.name and not (
                kind == "member" and attribute in NAMEDTUPLE_API):
            return "%s's private %s.%s" % (owner, current, attribute)
        return None
    return None


def _by_place(line):
    path, _, rest = line.partition(":")
    number = rest.split(":", 1)[0]
    return path, int(number) if number.isdigit() else 0, line


def check(library=LIBRARY, package=PACKAGE):
    """{rule: [violations]} for the library at `library`."""
    modules = load(library, package)
    imports = Imports(modules, package)
    return {"layers": layer_violations(imports), "apart": apart_violations(imports),
            "circles": circles(imports),
            "function imports": function_imports(modules), "private names": private_uses(imports)}


@pytest.fixture(scope="module")
def violations():
    found = check()
    for rule, lines in found.items():
        print("\n== %s: %d" % (rule, len(lines)))
        for line in lines:
            print(line)
    return found


@pytest.mark.parametrize("rule", ["layers", "apart", "circles", "function imports",
                                  "private names"])
def test_the_library_keeps_its_layers(violations, rule):
    lines = violations[rule]
    assert not lines, "%d %s violations:\n%s" % (len(lines), rule, "\n".join(lines))


# ------------------------------------------------------------------------------------------
# The checker itself, on a made-up package with one violation of each kind

FAKE = {
    "__init__.py": "",
    "core/__init__.py": "",
    "core/a.py": "from ..tool import t\n_hidden = 1\n",
    "core/b.py": "from . import c\n",
    "core/c.py": "from . import b\n",
    "probe/__init__.py": "",
    "probe/p.py": "from ..archive import r\nfrom ..core.a import _hidden\n",
    "archive/__init__.py": "",
    "archive/r.py": ("from ..core import a\nimport jumbo.core.a as alias\n\n"
                     "def f():\n    import json\n    return a._hidden + alias._hidden\n"),
    "tool/__init__.py": "",
    "tool/t.py": "from ..core.a import Thing\nThing._replace\nThing._secret\n",
    "odd/__init__.py": "from .. import core\n",
    "report/__init__.py": "",
    "report/q.py": "def g(thing):\n    thing._own = 1\n    return thing._hidden, thing._own\n",
}


def test_the_checker_finds_each_kind_of_violation(tmp_path):
    for name, text in FAKE.items():
        path = tmp_path / "jumbo" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    prefix = tmp_path.name + "/"
    found = dict((rule, [line.replace(prefix, "") for line in lines])
                 for rule, lines in check(str(tmp_path), "jumbo").items())
    assert found["layers"] == [
        "jumbo/core/a.py:1: jumbo.core.a (core) imports jumbo.tool.t from a higher layer (tool)",
        "jumbo/odd/__init__.py:1: jumbo.odd is in no layer (add jumbo.odd to LAYERS)",
        "jumbo/probe/p.py:1: jumbo.probe.p (probe) imports jumbo.archive.r from its peer archive",
    ]
    assert found["circles"] == [
        "circle between jumbo.core.a, jumbo.tool.t: jumbo/core/a.py:1 (jumbo.core.a -> "
        "jumbo.tool.t); jumbo/tool/t.py:1 (jumbo.tool.t -> jumbo.core.a)",
        "circle between jumbo.core.b, jumbo.core.c: jumbo/core/b.py:1 (jumbo.core.b -> "
        "jumbo.core.c); jumbo/core/c.py:1 (jumbo.core.c -> jumbo.core.b)"]
    assert found["function imports"] == ["jumbo/archive/r.py:5: import json inside a function"]
    assert found["private names"] == [
        "jumbo/archive/r.py:6: jumbo.archive.r uses jumbo.core.a's private jumbo.core.a._hidden",
        "jumbo/probe/p.py:2: jumbo.probe.p uses jumbo.core.a's private _hidden (from-import)",
        "jumbo/report/q.py:3: jumbo.report.q uses _hidden, private to jumbo.core.a",
        "jumbo/tool/t.py:3: jumbo.tool.t uses jumbo.core.a's private jumbo.core.a.Thing._secret",
    ], found["private names"]


def test_the_checker_finds_a_test_type_reading_the_tool(tmp_path):
    files = {"__init__.py": "", "core/__init__.py": "", "tool/__init__.py": "",
             "tool/t.py": "X = 1\n", "testtype/__init__.py": "",
             "testtype/s.py": "from ..core import spec\nfrom ..tool.t import X\n"}
    for name, text in files.items():
        path = tmp_path / "jumbo" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    found = check(str(tmp_path), "jumbo")
    assert [line.replace(tmp_path.name + "/", "") for line in found["apart"]] == [
        "jumbo/testtype/s.py:2: jumbo.testtype.s imports jumbo.tool.t: testtype imports "
        "nothing from tool"]
    assert found["layers"] == []

