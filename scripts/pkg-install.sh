#!/bin/sh
# Install the suite's pieces into a staging root; shared by the RPM specs (rpm/*.spec) and the
# Debian rules (debian/rules) so that both package formats carry exactly the same files.
#
#   pkg-install.sh plugin  SRC_DIR DEST_DIR     a pScheduler plugin directory (every file in it)
#   pkg-install.sh library SRC_PKG SITELIB BINDIR PYTHON
#                                               the `jumbo` package + its console commands
#   pkg-install.sh systemd SRC_DIR UNITDIR CONFDIR
#                                               the scheduled report's units (0644) and its
#                                               settings file (0600: it may hold a login)
#
# Plugin files are globbed, not listed: whatever the plugin directory holds is installed, method
# executables (user-executable in the tree) with mode 0755, everything else 0644. Byte-code,
# caches and editor droppings are left out.
set -eu

skip() {
  case $1 in
    __pycache__|*.pyc|*.pyo|*~|.*|Makefile|tests) return 0 ;;
  esac
  return 1
}

copy_tree() {  # copy_tree SRC DEST: recursive, modes normalised as described above
  local from to path name
  from=$1 to=$2
  install -d -m 0755 "$to"
  for path in "$from"/* "$from"/.[!.]*; do
    [ -e "$path" ] || continue
    name=$(basename "$path")
    skip "$name" && continue
    if [ -d "$path" ]; then
      copy_tree "$path" "$to/$name"
    elif [ -x "$path" ]; then
      install -m 0755 "$path" "$to/$name"
    else
      install -m 0644 "$path" "$to/$name"
    fi
  done
}

case ${1:-} in
  plugin)
    [ $# -eq 3 ] || { echo "usage: $0 plugin SRC_DIR DEST_DIR" >&2; exit 2; }
    src=$2 dest=$3
    if [ ! -f "$src/enumerate" ]; then
      echo "pkg-install: $src has no 'enumerate' method: not a plugin directory" >&2
      exit 1
    fi
    copy_tree "$src" "$dest"
    ;;
  library)
    [ $# -eq 5 ] || { echo "usage: $0 library SRC_PKG SITELIB BINDIR PYTHON" >&2; exit 2; }
    src=$2 sitelib=$3 bindir=$4 python=$5
    copy_tree "$src" "$sitelib/jumbo"
    # Library modules are imported, never executed: no executable bits inside the package.
    find "$sitelib/jumbo" -type f -exec chmod 0644 {} +
    # Console commands from setup.py's entry points, as small wrappers (no setuptools at
    # run time). A command is only made when the module it points to exists.
    install -d -m 0755 "$bindir"
    "$python" - "$src/../setup.py" "$src/.." <<'PY' | while read -r cmd module func; do
import ast, os, sys
tree = ast.parse(open(sys.argv[1]).read())
for node in ast.walk(tree):
    if isinstance(node, ast.keyword) and node.arg == "entry_points":
        scripts = ast.literal_eval(node.value).get("console_scripts", [])
        for entry in scripts:
            name, target = [part.strip() for part in entry.split("=", 1)]
            module, func = target.split(":")
            base = os.path.join(sys.argv[2], *module.split("."))
            if os.path.isfile(base + ".py") or os.path.isfile(os.path.join(base, "__init__.py")):
                print(name, module, func)
PY
      printf '#!/usr/bin/python3\nimport sys\nfrom %s import %s\nsys.exit(%s())\n' \
        "$module" "$func" "$func" > "$bindir/$cmd"
      chmod 0755 "$bindir/$cmd"
    done
    ;;
  systemd)
    [ $# -eq 4 ] || { echo "usage: $0 systemd SRC_DIR UNITDIR CONFDIR" >&2; exit 2; }
    src=$2 unitdir=$3 confdir=$4
    install -d -m 0755 "$unitdir" "$confdir"
    for unit in "$src"/*.service "$src"/*.timer; do
      install -m 0644 "$unit" "$unitdir/"
    done
    install -m 0600 "$src/report.conf" "$confdir/report.conf"
    ;;
  *)
    echo "usage: $0 plugin|library|systemd ..." >&2
    exit 2
    ;;
esac
