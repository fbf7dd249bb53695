// Reads each faulty stream of StreamEndingsTest with the official SDKs and prints, per case and client, what the
// SDK raised (or that it completed). Arguments: router base URL, hostile upstream base URL, the cases (comma
// separated), the gated cases (the client opens the upstream's gate once it has read the first text delta).
'use strict';
const Anthropic = require('@anthropic-ai/sdk');
const OpenAI = require('openai');

const [routerBase, upstreamBase, casesArg, gatedArg] = process.argv.slice(2);
const cases = casesArg.split(',');
const gated = new Set(gatedArg.split(',').filter((s) => s.length > 0));
const anthropic = new Anthropic({ baseURL: routerBase, apiKey: 'unused', maxRetries: 0, timeout: 30000 });
const openai = new OpenAI({ baseURL: routerBase + '/v1', apiKey: 'unused', maxRetries: 0, timeout: 30000 });
const MESSAGE = { model: 'm', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] };
const RESPONSE = { model: 'm', input: 'hi' };

/** Opens the case's gate at most once per call. */
function gateOpener(name) {
  let opened = !gated.has(name);
  return async () => {
    if (!opened) {
      opened = true;
      const res = await fetch(`${upstreamBase}/release/${name}`);
      if (res.status !== 204) throw new Error(`gate ${name}: ${res.status}`);
    }
  };
}

function describe(e, events, SdkApiError) {
  return {
    thrown: true,
    class: e && e.constructor ? e.constructor.name : typeof e,
    apiError: e instanceof SdkApiError,
    status: e && e.status !== undefined ? e.status : null,
    type: (e && (e.type || (e.error && e.error.type) || (e.error && e.error.error && e.error.error.type)
      || e.code)) || null,
    message: e && e.message ? String(e.message) : String(e),
    events,
  };
}

async function messagesRaw(name) {
  const events = [];
  const open = gateOpener(name);
  try {
    const stream = await anthropic.messages.create({ ...MESSAGE, stream: true }, { headers: { 'x-case': name } });
    for await (const ev of stream) {
      events.push(ev.type);
      if (ev.type === 'content_block_delta') await open();
    }
    return { thrown: false, completed: events.includes('message_stop'), events };
  } catch (e) {
    return describe(e, events, Anthropic.APIError);
  }
}

async function messagesHelper(name) {
  const events = [];
  const open = gateOpener(name);
  try {
    const stream = anthropic.messages.stream(MESSAGE, { headers: { 'x-case': name } });
    stream.on('streamEvent', (ev) => {
      events.push(ev.type);
      if (ev.type === 'content_block_delta') open().catch(() => {});
    });
    const message = await stream.finalMessage();
    return { thrown: false, completed: message.stop_reason !== null, text: message.content.map((b) => b.text).join(''),
      events };
  } catch (e) {
    return describe(e, events, Anthropic.APIError);
  }
}

async function responsesRaw(name) {
  const events = [];
  const open = gateOpener(name);
  try {
    const stream = await openai.responses.create({ ...RESPONSE, stream: true }, { headers: { 'x-case': name } });
    for await (const ev of stream) {
      events.push(ev.type);
      if (ev.type === 'response.output_text.delta') await open();
    }
    return { thrown: false, completed: events.includes('response.completed'), events };
  } catch (e) {
    return describe(e, events, OpenAI.APIError);
  }
}

async function responsesHelper(name) {
  const events = [];
  const open = gateOpener(name);
  try {
    const stream = openai.responses.stream(RESPONSE, { headers: { 'x-case': name } });
    stream.on('event', (ev) => {
      events.push(ev.type);
      if (ev.type === 'response.output_text.delta') open().catch(() => {});
    });
    const response = await stream.finalResponse();
    return { thrown: false, completed: response.status === 'completed', text: response.output_text, events };
  } catch (e) {
    return describe(e, events, OpenAI.APIError);
  }
}

(async () => {
  const out = {};
  for (const name of cases) {
    out[name] = {
      'anthropic messages.create(stream)': await messagesRaw(name),
      'anthropic messages.stream()': await messagesHelper(name),
      'openai responses.create(stream)': await responsesRaw(name),
      'openai responses.stream()': await responsesHelper(name),
    };
  }
  process.stdout.write(JSON.stringify(out));
})().catch((e) => {
  process.stderr.write(String(e && e.stack ? e.stack : e));
  process.exit(1);
});
