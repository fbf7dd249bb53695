// The independent reference for the prompt corpus: renders every case with @huggingface/jinja (the Jinja
// engine transformers.js uses) and tokenizes the text with @lenml/tokenizers (a JavaScript port of
// transformers.js' tokenizers), the rendered text encoded without added special tokens as transformers'
// apply_chat_template(tokenize=True) does. Reads one JSON request on stdin, writes one JSON answer on stdout.
//
// usage: node reference.cjs <node_modules dir> < request.json
// request: {"tokenizer": path, "config": path, "cases": [{"name", "body"}]}, each body a chat-completion request
// answer:  [{"name", "text", "ids"} | {"name", "error"}]
"use strict";
const fs = require("fs");
const path = require("path");

const modules = process.argv[2];
const { Template } = require(path.join(modules, "@huggingface/jinja"));
const { TokenizerLoader } = require(path.join(modules, "@lenml/tokenizers"));

const request = JSON.parse(fs.readFileSync(0, "utf8"));
const tokenizerJSON = JSON.parse(fs.readFileSync(request.tokenizer, "utf8"));
const tokenizerConfig = JSON.parse(fs.readFileSync(request.config, "utf8"));
const tokenizer = TokenizerLoader.fromPreTrained({ tokenizerJSON, tokenizerConfig });
const template = new Template(tokenizerConfig.chat_template);

// The special tokens transformers passes to the template (its special_tokens_map), in string form.
function tokenString(value) {
  return value && typeof value === "object" ? value.content : value;
}
const special = {};
for (const key of ["bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token"]) {
  const value = tokenString(tokenizerConfig[key]);
  if (value !== undefined && value !== null) {
    special[key] = value;
  }
}
if (Array.isArray(tokenizerConfig.additional_special_tokens)) {
  special.additional_special_tokens = tokenizerConfig.additional_special_tokens.map(tokenString);
}

// A message whose content is an array of parts renders as its text parts joined by a newline, as
// dynamo.frontend prepares messages before it applies the template.
function prepare(message) {
  if (!Array.isArray(message.content)) {
    return message;
  }
  const text = message.content.filter((p) => p && p.type === "text").map((p) => p.text).join("\n");
  return { ...message, content: text };
}

const answers = request.cases.map((c) => {
  try {
    const body = c.body;
    const kwargs = { ...(body.chat_template_kwargs || {}) };
    for (const reserved of ["messages", "tools", "documents", "add_generation_prompt"]) {
      delete kwargs[reserved];
    }
    const context = { ...special, ...kwargs, messages: body.messages.map(prepare), add_generation_prompt: true };
    if (body.tools) {
      context.tools = body.tools;
    }
    const text = template.render(context);
    const ids = tokenizer.encode(text, { add_special_tokens: false });
    return { name: c.name, text, ids: Array.from(ids) };
  } catch (e) {
    return { name: c.name, error: String(e && e.message ? e.message : e) };
  }
});
process.stdout.write(JSON.stringify(answers));
