// An independent NATS publisher for the router's event-plane tests: node's own NATS client publishes each
// message exactly as given (hex, one per line on stdin: "SUBJECT HEX"), flushes and exits 0. Usage:
//   node publish.mjs nats://127.0.0.1:PORT [token] < messages.txt
// The bytes are msgpack EventEnvelopes built outside the router (python3-msgpack, or encode.mjs below).
import { connect } from "nats";
import { createInterface } from "node:readline";

const [server, token] = process.argv.slice(2);
const nc = await connect({ servers: server, token: token || undefined });
const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
let count = 0;
for await (const line of lines) {
  const trimmed = line.trim();
  if (!trimmed) continue;
  const [subject, hex] = trimmed.split(/\s+/);
  nc.publish(subject, Buffer.from(hex, "hex"));
  count++;
}
await nc.flush();
await nc.close();
console.log(`published ${count}`);
