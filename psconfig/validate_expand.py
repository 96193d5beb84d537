"""pSConfig template checks, part 2: the template variables of one task for one tuple of
addresses, as the pSConfig agent expands them (`{% address[i] %}`, `{% jq ... %}`, ...)."""

import json
import re

from validate_structure import section_of

VAR_RE = re.compile(r"\{%\s+(.*?)\s+%\}")
INDEXED_VAR_RE = re.compile(r"^(address|pscheduler_address|lead_bind_address)\[(\d+)\]$")


class JqUnsupported(Exception):
    pass


_JQ_PATH_RE = re.compile(r'^\.(addresses|hosts)\[(\d+)\]((?:\.(?:[A-Za-z_][A-Za-z0-9_]*|"[^"]*"))*)'
                         r'(\s*\|\s*tostring)?$')
_JQ_STEP_RE = re.compile(r'\.([A-Za-z_][A-Za-z0-9_]*|"[^"]*")')


def eval_jq(expr, context):
    """The small jq subset templates use: .addresses[i]._meta.key (| tostring)."""
    match = _JQ_PATH_RE.match(expr.strip())
    if not match:
        raise JqUnsupported(expr)
    items = context.get(match.group(1), [])
    index = int(match.group(2))
    value = items[index] if index < len(items) else None
    for step in _JQ_STEP_RE.findall(match.group(3) or ""):
        key = step[1:-1] if step.startswith('"') else step
        value = value.get(key) if isinstance(value, dict) else None
    if match.group(4):
        value = value if isinstance(value, str) else json.dumps(value)
    return value


class Expander(object):
    """pSConfig's template variables for one task and one tuple of addresses."""

    def __init__(self, template, task, pair):
        addresses = section_of(template, "addresses")
        hosts = section_of(template, "hosts")
        self.pair = pair
        self.task = task
        self.addr_objs = [addresses.get(n, {}) for n in pair]
        self.context = {
            "addresses": self.addr_objs,
            "hosts": [hosts.get(a.get("host"), {}) if a.get("host") else {} for a in self.addr_objs],
        }
        self.issues = []

    def _var(self, name):
        match = INDEXED_VAR_RE.match(name)
        if match:
            kind, index = match.group(1), int(match.group(2))
            if index >= len(self.pair):
                self.issues.append("{%% %s %%} but the group has only %d dimension(s)"
                                   % (name, len(self.pair)))
                return ""
            obj = self.addr_objs[index]
            if kind == "address":
                return obj.get("address", self.pair[index])
            if kind == "pscheduler_address":
                return obj.get("pscheduler-address", obj.get("address", self.pair[index]))
            return obj.get("lead-bind-address", "")
        if name == "scheduled_by_address":
            index = self.task.get("scheduled-by", 0)
            if index >= len(self.pair):
                self.issues.append("scheduled-by %d but the group has only %d dimension(s)"
                                   % (index, len(self.pair)))
                return ""
            return self.addr_objs[index].get("address", self.pair[index])
        if name == "localhost":
            return "localhost"
        if name == "flip":
            return False
        if name.startswith("jq "):
            try:
                value = eval_jq(name[3:], self.context)
            except JqUnsupported:
                return "{jq}"
            if value is None:
                return ""
            if not isinstance(value, str):
                self.issues.append("{%% %s %%} gives %s, not a string: pSConfig drops the task "
                                   "(end the expression with | tostring)" % (name, json.dumps(value)))
                return json.dumps(value)
            return value
        self.issues.append("unknown template variable {%% %s %%}" % name)
        return ""

    def expand(self, value):
        if isinstance(value, dict):
            return {k: self.expand(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.expand(v) for v in value]
        if isinstance(value, str):
            whole = VAR_RE.fullmatch(value.strip())
            if whole:  # the whole string is one variable: replaced by its value
                return self._var(whole.group(1))
            return VAR_RE.sub(lambda m: str(self._var(m.group(1))), value)
        return value
