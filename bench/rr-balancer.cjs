// A round-robin HTTP balancer for bench/replicas.sh: each request (chat completions and admin calls alike) goes
// to the next router replica in turn, its body and answer (SSE included) streamed through unchanged. A replica
// that refuses the connection is skipped for that request (the next one is tried), as a balancer's passive
// health check would, so killing a replica mid-replay shows what its peers do, not a balancer artefact.
//   node bench/rr-balancer.cjs LISTEN_PORT UPSTREAM_PORT...
const http = require("http");
const [listenPort, ...upstreams] = process.argv.slice(2).map(Number);
const agent = new http.Agent({ keepAlive: true, maxSockets: 1024 });
let next = 0;
let failed = 0;

function forward(req, res, body, tries) {
  const port = upstreams[next++ % upstreams.length];
  const up = http.request({ host: "127.0.0.1", port, path: req.url, method: req.method, headers: req.headers, agent },
    (r) => {
      res.writeHead(r.statusCode, r.headers);
      r.pipe(res);
    });
  up.on("error", (e) => {
    if (!res.headersSent && tries + 1 < upstreams.length && (e.code === "ECONNREFUSED" || e.code === "ECONNRESET")) {
      forward(req, res, body, tries + 1);
    } else {
      failed++;
      if (!res.headersSent) {
        res.writeHead(502);
      }
      res.end();
    }
  });
  up.end(body);
}

http.createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => forward(req, res, Buffer.concat(chunks), 0));
}).listen(listenPort, "127.0.0.1", () => console.log(`balancer on ${listenPort} over ${upstreams.join(", ")}`));
process.on("SIGTERM", () => {
  console.log(`balancer: ${failed} requests failed at the balancer`);
  process.exit(0);
});
