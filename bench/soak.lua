-- wrk script of bench/soak.sh: one streamed chat completion per request; a response that is not a 200
-- ending in "data: [DONE]" counts as a failed stream (wrk alone only counts non-2xx and socket errors).
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"model":"demo-model","stream":true,"messages":[{"role":"user","content":"Say hello."}]}'

local threads = {}
function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  failed = 0
  completed = 0
  s4xx = 0
  s5xx = 0
  truncated = 0
end

function response(status, headers, body)
  if status == 200 and string.find(body, "data: [DONE]", 1, true) then
    completed = completed + 1
  else
    failed = failed + 1
    if status >= 500 then s5xx = s5xx + 1 elseif status >= 400 then s4xx = s4xx + 1 else truncated = truncated + 1 end
  end
end

function done(summary, latency, requests)
  local ok, bad, c4, c5, cut = 0, 0, 0, 0, 0
  for _, t in ipairs(threads) do
    ok = ok + t:get("completed")
    bad = bad + t:get("failed")
    c4 = c4 + t:get("s4xx")
    c5 = c5 + t:get("s5xx")
    cut = cut + t:get("truncated")
  end
  local e = summary.errors
  io.write(string.format(
    "RESULT requests=%d completed=%d failed_streams=%d status_4xx=%d status_5xx=%d no_done=%d p50_us=%d p99_us=%d max_us=%d " ..
    "err_connect=%d err_read=%d err_write=%d err_status=%d err_timeout=%d\n",
    summary.requests, ok, bad, c4, c5, cut, latency:percentile(50), latency:percentile(99), latency.max,
    e.connect, e.read, e.write, e.status, e.timeout))
end
