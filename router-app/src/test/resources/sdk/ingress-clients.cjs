// Every official-SDK call of SdkIngressEndToEndTest against the router at process.argv[2], run once per test
// class by node with NODE_PATH at the test fixture set's node_modules (test-fixtures/npm/sdk). Each call puts
// "[case:<name>]" in its prompt so the test can find what the shim received for it. Prints one JSON object:
// {<name>: {ok: true, ...what the SDK returned} | {ok: false, error}}.
'use strict';
const Anthropic = require('@anthropic-ai/sdk').default;
const OpenAI = require('openai').default;

const base = process.argv[2];
const model = process.argv[3];
const anthropic = new Anthropic({ baseURL: base, apiKey: 'sdk-test', maxRetries: 0 });
const prefixed = new Anthropic({ baseURL: base + '/anthropic', apiKey: 'sdk-test', maxRetries: 0 });
const openai = new OpenAI({ baseURL: base + '/v1', apiKey: 'sdk-test', maxRetries: 0 });

const weather = {
  name: 'get_weather',
  description: 'The weather in a city.',
  input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};
const weatherFn = {
  type: 'function', name: 'get_weather', description: 'The weather in a city.',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }, strict: false,
};

const cases = {
  async 'messages-create'() {
    const m = await anthropic.messages.create({
      model, max_tokens: 32, temperature: 0.2, top_p: 0.9, top_k: 5, stop_sequences: ['\n\nHuman:'],
      system: [{ type: 'text', text: 'You are terse.' }, { type: 'text', text: 'Answer in English.' }],
      metadata: { user_id: 'user-7' },
      messages: [{ role: 'user', content: [{ type: 'text', text: '[case:messages-create] Hello' },
        { type: 'text', text: 'and goodbye' }] }],
    });
    return { type: m.type, role: m.role, text: m.content.map((b) => b.text).join(''), stop_reason: m.stop_reason,
      usage: m.usage, id: m.id };
  },
  async 'messages-prefixed'() {
    const m = await prefixed.messages.create({ model, max_tokens: 8,
      messages: [{ role: 'user', content: '[case:messages-prefixed] Hi' }] });
    return { text: m.content.map((b) => b.text).join('') };
  },
  async 'messages-stream-text'() {
    const stream = anthropic.messages.stream({ model, max_tokens: 32, system: 'Be brief.',
      messages: [{ role: 'user', content: '[case:messages-stream-text] Tell me a story' }] });
    const events = [];
    for await (const e of stream) {
      events.push(e.type + (e.delta && e.delta.type ? ':' + e.delta.type : ''));
    }
    const m = await stream.finalMessage();
    return { events, text: m.content.map((b) => b.text).join(''), stop_reason: m.stop_reason, usage: m.usage };
  },
  async 'messages-stream-tool'() {
    const stream = anthropic.messages.stream({ model, max_tokens: 64, tools: [weather],
      tool_choice: { type: 'auto' },
      messages: [{ role: 'user', content: '[case:messages-stream-tool] Weather in Paris?' }] });
    const events = [];
    for await (const e of stream) {
      events.push(e.type + (e.delta && e.delta.type ? ':' + e.delta.type : ''));
    }
    const m = await stream.finalMessage();
    const use = m.content.find((b) => b.type === 'tool_use');
    return { events, stop_reason: m.stop_reason, tool: use && { name: use.name, input: use.input, id: use.id } };
  },
  async 'messages-tool-result'() {
    const m = await anthropic.messages.create({ model, max_tokens: 32, tools: [weather],
      messages: [
        { role: 'user', content: '[case:messages-tool-result] Weather in Paris?' },
        { role: 'assistant', content: [{ type: 'text', text: 'Let me check.' },
          { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'Sunny, 21 C' }] },
      ] });
    return { text: m.content.map((b) => b.text).join(''), stop_reason: m.stop_reason };
  },
  async 'count-tokens'() {
    const c = await anthropic.messages.countTokens({ model,
      messages: [{ role: 'user', content: '[case:count-tokens] How many tokens is this?' }] });
    return { input_tokens: c.input_tokens };
  },
  async 'messages-unknown-model'() {
    try {
      await anthropic.messages.create({ model: 'no-such-model', max_tokens: 8,
        messages: [{ role: 'user', content: '[case:messages-unknown-model]' }] });
      return { thrown: false };
    } catch (e) {
      return { thrown: true, status: e.status, class: e.constructor.name, type: e.error && e.error.error
        && e.error.error.type };
    }
  },
  async 'responses-create'() {
    const r = await openai.responses.create({ model, instructions: 'You are terse.', max_output_tokens: 32,
      input: '[case:responses-create] Hello' });
    return { object: r.object, status: r.status, output_text: r.output_text, usage: r.usage, id: r.id };
  },
  async 'responses-stream'() {
    const stream = openai.responses.stream({ model,
      input: [{ role: 'user', content: [{ type: 'input_text', text: '[case:responses-stream] Tell me a story' }] }] });
    const events = [];
    for await (const e of stream) {
      events.push(e.type);
    }
    const r = await stream.finalResponse();
    return { events, status: r.status, output_text: r.output_text };
  },
  async 'responses-tool'() {
    const r = await openai.responses.create({ model, tools: [weatherFn], tool_choice: 'auto',
      input: '[case:responses-tool] Weather in Paris?' });
    const call = r.output.find((o) => o.type === 'function_call');
    return { call: call && { name: call.name, arguments: call.arguments, call_id: call.call_id } };
  },
  async 'responses-stream-tool'() {
    const stream = openai.responses.stream({ model, tools: [weatherFn],
      input: '[case:responses-stream-tool] Weather in Paris?' });
    const events = [];
    for await (const e of stream) {
      events.push(e.type);
    }
    const r = await stream.finalResponse();
    const call = r.output.find((o) => o.type === 'function_call');
    return { events, call: call && { name: call.name, arguments: call.arguments } };
  },
  async 'responses-multi-turn'() {
    const r = await openai.responses.create({ model, tools: [weatherFn], input: [
      { role: 'user', content: '[case:responses-multi-turn] Weather in Paris?' },
      { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
      { type: 'function_call_output', call_id: 'call_1', output: 'Sunny, 21 C' },
    ] });
    return { output_text: r.output_text };
  },
  async 'chat-create'() {
    const c = await openai.chat.completions.create({ model,
      messages: [{ role: 'user', content: '[case:chat-create] Hello' }] });
    return { text: c.choices[0].message.content };
  },
  async 'chat-stream'() {
    const stream = await openai.chat.completions.create({ model, stream: true,
      messages: [{ role: 'user', content: '[case:chat-stream] Hello' }] });
    let text = '';
    for await (const chunk of stream) {
      text += (chunk.choices[0] && chunk.choices[0].delta.content) || '';
    }
    return { text };
  },
};

(async () => {
  const out = {};
  for (const [name, run] of Object.entries(cases)) {
    try {
      out[name] = Object.assign({ ok: true }, await run());
    } catch (e) {
      out[name] = { ok: false, error: String(e && e.stack || e) };
    }
  }
  process.stdout.write(JSON.stringify(out));
})();
