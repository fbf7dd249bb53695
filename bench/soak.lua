-- wrk script of bench/soak.sh: one streamed chat completion per request; a response that is not a 200
-- ending in "data: [DONE]" counts as a failed stream (wrk alone only counts non-2xx and socket errors).
-- The failed ones are also counted per status and the first FAILED_BODIES (10) of them are written, status
-- and the head of the body, to FAILED_OUT when it is set, so a run says who refused and why.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"model":"demo-model","stream":true,"messages":[{"role":"user","content":"Say hello."}]}'

local threads = {}
function setup(thread)
  table.insert(threads, thread)
end

local failed_out = os.getenv("FAILED_OUT")
local failed_bodies = tonumber(os.getenv("FAILED_BODIES") or "10")

function init(args)
  failed = 0
  completed = 0
  s4xx = 0
  s5xx = 0
  truncated = 0
  statuses = "" -- "status=count ..." of the failed streams, rebuilt on each failure (read back by done)
  by_status = {}
  kept = 0
end

local function keep(status, body)
  if failed_out == nil or kept >= failed_bodies then return end
  kept = kept + 1
  local f = io.open(failed_out, "a")
  if f == nil then return end
  f:write(string.format("status %d, %d bytes: %s\n", status, #body, string.sub(body, 1, 400):gsub("%c", " ")))
  f:close()
end

function response(status, headers, body)
  if status == 200 and string.find(body, "data: [DONE]", 1, true) then
    completed = completed + 1
  else
    failed = failed + 1
    if status >= 500 then s5xx = s5xx + 1 elseif status >= 400 then s4xx = s4xx + 1 else truncated = truncated + 1 end
    by_status[status] = (by_status[status] or 0) + 1
    local parts = {}
    for s, n in pairs(by_status) do table.insert(parts, s .. "=" .. n) end
    table.sort(parts)
    statuses = table.concat(parts, ",")
    keep(status, body)
  end
end

function done(summary, latency, requests)
  local ok, bad, c4, c5, cut, hist = 0, 0, 0, 0, 0, {}
  for _, t in ipairs(threads) do
    ok = ok + t:get("completed")
    bad = bad + t:get("failed")
    c4 = c4 + t:get("s4xx")
    c5 = c5 + t:get("s5xx")
    cut = cut + t:get("truncated")
    local s = t:get("statuses")
    if s ~= "" then table.insert(hist, s) end
  end
  local e = summary.errors
  io.write(string.format(
    "RESULT requests=%d completed=%d failed_streams=%d status_4xx=%d status_5xx=%d no_done=%d p50_us=%d p99_us=%d max_us=%d " ..
    "err_connect=%d err_read=%d err_write=%d err_status=%d err_timeout=%d\n",
    summary.requests, ok, bad, c4, c5, cut, latency:percentile(50), latency:percentile(99), latency.max,
    e.connect, e.read, e.write, e.status, e.timeout))
  io.write("FAILED_BY_STATUS " .. (#hist > 0 and table.concat(hist, ";") or "none") .. "\n")
end
