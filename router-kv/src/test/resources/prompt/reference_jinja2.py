"""Second rendering check for the prompt corpus: Jinja2 set up the way Hugging Face transformers sets it up
for apply_chat_template (transformers/utils/chat_template_utils.py, _compile_jinja_template): an immutable
sandboxed environment with trim_blocks and lstrip_blocks, the loop-controls extension, a tojson filter that is
json.dumps with ensure_ascii=False (and its indent, separators and sort_keys), raise_exception and
strftime_now as globals, and render(messages=..., tools=..., documents=None, add_generation_prompt=True,
**special_tokens_map, **chat_template_kwargs).

usage: /usr/bin/python3 reference_jinja2.py < request.json  (the request reference.cjs reads)
answer: [{"name", "text"} | {"name", "error"}]
"""
import json
import sys
from datetime import datetime

import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment


def raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def strftime_now(fmt):
    return datetime.now().strftime(fmt)


def token_string(value):
    return value.get("content") if isinstance(value, dict) else value


def prepare(message):
    """A multi-part content renders as its text parts joined by a newline (as dynamo.frontend does)."""
    if not isinstance(message.get("content"), list):
        return message
    text = "\n".join(p["text"] for p in message["content"] if isinstance(p, dict) and p.get("type") == "text")
    return {**message, "content": text}


def main():
    request = json.load(sys.stdin)
    with open(request["config"], encoding="utf-8") as f:
        config = json.load(f)
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=["jinja2.ext.loopcontrols"])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    template = env.from_string(config["chat_template"])
    special = {}
    for key in ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token"):
        value = token_string(config.get(key))
        if value is not None:
            special[key] = value
    if isinstance(config.get("additional_special_tokens"), list):
        special["additional_special_tokens"] = [token_string(t) for t in config["additional_special_tokens"]]
    answers = []
    for case in request["cases"]:
        try:
            body = case["body"]
            extra = {k: v for k, v in (body.get("chat_template_kwargs") or {}).items()
                     if k not in ("messages", "tools", "documents", "add_generation_prompt")}
            kwargs = {**special, **extra}
            text = template.render(messages=[prepare(m) for m in body["messages"]], tools=body.get("tools"),
                                   documents=None,
                                   add_generation_prompt=True, **kwargs)
            answers.append({"name": case["name"], "text": text})
        except Exception as e:  # one failing case is reported, not fatal
            answers.append({"name": case["name"], "error": str(e)})
    json.dump(answers, sys.stdout, ensure_ascii=False)


main()
