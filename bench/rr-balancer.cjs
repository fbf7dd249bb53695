// A round-robin HTTP balancer for bench/replicas.sh: each request (chat completions and admin calls alike) goes
// to the next router replica in turn, its body and answer (SSE included) streamed through unchanged.
//
// Like nginx's proxy_next_upstream (error, non_idempotent), a request whose replica refused or reset the
// connection before any byte of the answer reached the client is sent to the next replica, and that replica is
// skipped for a second (a passive health check), so killing a replica mid-replay shows what its peers do, not a
// balancer artefact. Once the answer has started nothing can be retried: such a request fails with the replica
// that was serving it ("in flight").
//
// Every request is attributed to the replica whose answer the client got: on SIGTERM the balancer prints one
// line per upstream port, "balancer: upstream PORT served N, status S count ..., retried away R (refused A, reset
// before an answer B), failed in flight F", and one line per failure as it happens ("balancer: failed PORT
// in-flight CODE", "balancer: failed - no-upstream ..."), and the first error answers of each replica.
//   [READY_FILE=PATH] node bench/rr-balancer.cjs LISTEN_PORT UPSTREAM_PORT...
const fs = require("fs");
const http = require("http");
const [listenPort, ...upstreams] = process.argv.slice(2).map(Number);
const agent = new http.Agent({ keepAlive: true, maxSockets: 1024 });
const RETRYABLE = new Set(["ECONNREFUSED", "ECONNRESET", "EPIPE", "ECONNABORTED", "EHOSTUNREACH"]);
const SKIP_MS = 1000;
let next = 0;
const stats = new Map(upstreams.map((p) => [p, { served: 0, status: {}, retriedAway: 0, retried: { refused: 0, reset: 0 }, failedInFlight: 0, errorsLogged: 0 }]));
const downUntil = new Map();
let failedNoUpstream = 0;

function pick(tried) {
  const now = Date.now();
  for (let i = 0; i < upstreams.length; i++) {
    const port = upstreams[next++ % upstreams.length];
    if (!tried.has(port) && (downUntil.get(port) || 0) <= now) {
      return port;
    }
  }
  // Every untried replica is marked down: try one anyway rather than fail without asking.
  return upstreams.find((p) => !tried.has(p));
}

function forward(req, res, body, tried) {
  const port = pick(tried);
  if (port === undefined) {
    failedNoUpstream++;
    console.log(`balancer: failed - no-upstream ${req.method} ${req.url}`);
    res.writeHead(502);
    res.end();
    return;
  }
  tried.add(port);
  const s = stats.get(port);
  let answered = false;
  const up = http.request({ host: "127.0.0.1", port, path: req.url, method: req.method, headers: req.headers, agent },
    (r) => {
      answered = true;
      s.served++;
      s.status[r.statusCode] = (s.status[r.statusCode] || 0) + 1;
      res.writeHead(r.statusCode, r.headers);
      if (r.statusCode >= 500 && s.errorsLogged < 3) {
        // The first few error answers of each replica, so a run says what they were.
        s.errorsLogged++;
        let text = "";
        r.on("data", (c) => { text += c.toString("utf8", 0, Math.min(c.length, 400)); });
        r.on("end", () => console.log(`balancer: ${port} answered ${r.statusCode}: ${text.slice(0, 400).replace(/\s+/g, " ")}`));
      }
      r.on("aborted", () => inFlight(port, "aborted", res));
      r.on("error", (e) => inFlight(port, e.code || String(e), res));
      r.pipe(res);
    });
  up.on("error", (e) => {
    if (answered) {
      inFlight(port, e.code || String(e), res);
    } else if (!res.headersSent && RETRYABLE.has(e.code)) {
      downUntil.set(port, Date.now() + SKIP_MS);
      s.retriedAway++;
      // Refused: the replica never saw it. Reset: it had the request and died before answering (the work it
      // started is lost; retried like nginx's proxy_next_upstream error non_idempotent, as the client got nothing).
      s.retried[e.code === "ECONNREFUSED" ? "refused" : "reset"]++;
      forward(req, res, body, tried);
    } else {
      inFlight(port, e.code || String(e), res);
    }
  });
  up.end(body);
}

function inFlight(port, code, res) {
  if (res.failedCounted) {
    return;
  }
  res.failedCounted = true;
  stats.get(port).failedInFlight++;
  console.log(`balancer: failed ${port} in-flight ${code}`);
  if (!res.headersSent) {
    res.writeHead(502);
    res.end();
  } else {
    res.destroy();
  }
}

// With READY_FILE set, nothing is forwarded until that file exists: the harness creates it once every replica is
// ready by itself (workers and subscriptions connected, tokenizer loaded), as a readiness probe would, so the
// replay's own readiness check (one replica per call through the balancer) cannot start it early.
const readyFile = process.env.READY_FILE;
let ready = !readyFile;

const server = http.createServer((req, res) => {
  if (!ready && !(ready = fs.existsSync(readyFile))) {
    res.writeHead(503, { "content-type": "text/plain" });
    res.end("replicas not ready\n");
    return;
  }
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => forward(req, res, Buffer.concat(chunks), new Set()));
});
// Node closes an idle client connection after 5 s by default; a client reusing it at that moment gets a reset
// for a request no replica saw (a 3-replica run lost 3 requests that way). Idle connections stay open as long as
// the routers', and a streamed answer has no deadline here.
server.keepAliveTimeout = 10 * 60 * 1000;
server.headersTimeout = server.keepAliveTimeout + 1000;
server.requestTimeout = 0;
server.listen(listenPort, "127.0.0.1", () => console.log(`balancer on ${listenPort} over ${upstreams.join(", ")}`));
process.on("SIGTERM", () => {
  for (const [port, s] of stats) {
    const status = Object.entries(s.status).map(([k, v]) => `${k} ${v}`).join(", ");
    console.log(`balancer: upstream ${port} served ${s.served}, status ${status || "-"}, retried away ${s.retriedAway}` +
      ` (refused ${s.retried.refused}, reset before an answer ${s.retried.reset}), failed in flight ${s.failedInFlight}`);
  }
  console.log(`balancer: failed without an upstream ${failedNoUpstream}`);
  process.exit(0);
});
