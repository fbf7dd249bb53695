"""Renders each snippet of a JSON list [{"template", "vars"}] with Jinja2 set up as transformers sets it up
(see reference_jinja2.py) and prints the list of results ({"text"} or {"error"}). Used by TemplateSemanticsTest."""
import json
import sys

import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment


def raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=["jinja2.ext.loopcontrols"])
env.filters["tojson"] = tojson
env.globals["raise_exception"] = raise_exception
out = []
for snippet in json.load(sys.stdin):
    try:
        out.append({"text": env.from_string(snippet["template"]).render(**snippet["vars"])})
    except Exception as e:
        out.append({"error": type(e).__name__ + ": " + str(e)})
json.dump(out, sys.stdout, ensure_ascii=False)
