-- wrk script of bench/run.sh: POST a chat completion and print one machine-readable result line.
-- Environment: BODY_STREAM=1 asks for SSE; BODY_WIRE=messages or responses sends the same prompt as an
-- Anthropic Messages or OpenAI Responses request instead (to the route of that wire; bench/ingress.sh);
-- EXTRA_HEADERS="name: value|name: value" adds headers
-- (Portkey's provider headers, the Dynamo pins for the direct-to-emulator run); DELAY_MS=D makes each
-- connection wait D ms after every answer (wrk's delay() hook), which caps the offered load at about
-- connections x 1000 / D requests/s: the closest wrk (without wrk2) gets to a fixed-rate run.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local stream = os.getenv("BODY_STREAM") == "1"
local wire = os.getenv("BODY_WIRE") or "chat"
local flag = stream and "true" or "false"
if wire == "messages" then
  wrk.body = '{"model":"demo-model","max_tokens":64,"stream":' .. flag ..
      ',"messages":[{"role":"user","content":"Say hello in one short sentence."}]}'
elseif wire == "responses" then
  wrk.body = '{"model":"demo-model","stream":' .. flag .. ',"input":"Say hello in one short sentence."}'
else
  wrk.body = '{"model":"demo-model","stream":' .. flag ..
      ',"messages":[{"role":"user","content":"Say hello in one short sentence."}]}'
end
local extra = os.getenv("EXTRA_HEADERS") or ""
for pair in string.gmatch(extra, "[^|]+") do
  local name, value = string.match(pair, "^%s*([^:]+):%s*(.-)%s*$")
  if name then wrk.headers[name] = value end
end
local delay_ms = tonumber(os.getenv("DELAY_MS") or "")
if delay_ms and delay_ms > 0 then
  function delay() return delay_ms end
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    "RESULT requests=%d duration_us=%d p50_us=%d p99_us=%d p999_us=%d max_us=%d " ..
    "err_connect=%d err_read=%d err_write=%d err_status=%d err_timeout=%d\n",
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    latency:percentile(99.9), latency.max, e.connect, e.read, e.write, e.status, e.timeout))
end
