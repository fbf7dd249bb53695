// The openai SDK against a router whose backend serves /v1/responses natively (SdkIngressEndToEndTest): one
// buffered create with previous_response_id (which only a native backend accepts) and one stream through the SDK's
// own accumulator. Prints one JSON object: {<name>: {ok: true, ...} | {ok: false, error}}.
'use strict';
const OpenAI = require('openai').default;

const openai = new OpenAI({ baseURL: process.argv[2] + '/v1', apiKey: 'sdk-test', maxRetries: 0 });
const model = process.argv[3];

const cases = {
  async 'native-create'() {
    const r = await openai.responses.create({ model, previous_response_id: 'resp_earlier',
      input: '[case:native-create] Hello' });
    return { id: r.id, status: r.status, output_text: r.output_text };
  },
  async 'native-stream'() {
    const stream = openai.responses.stream({ model, input: '[case:native-stream] Hello' });
    const events = [];
    for await (const e of stream) {
      events.push(e.type);
    }
    const r = await stream.finalResponse();
    return { events, status: r.status, output_text: r.output_text };
  },
};

(async () => {
  const out = {};
  for (const [name, run] of Object.entries(cases)) {
    try {
      out[name] = { ok: true, ...(await run()) };
    } catch (e) {
      out[name] = { ok: false, error: String(e && e.stack || e) };
    }
  }
  process.stdout.write(JSON.stringify(out));
})();
