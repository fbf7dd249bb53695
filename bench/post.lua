-- wrk script: POST a chat completion; BODY_STREAM=1 in the environment asks for SSE.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local stream = os.getenv("BODY_STREAM") == "1"
wrk.body = '{"model":"demo-model","stream":' .. (stream and "true" or "false") ..
    ',"messages":[{"role":"user","content":"Say hello in one short sentence."}]}'
