// Creates a JetStream stream over the given subjects (file storage), then publishes stdin's "SUBJECT HEX" lines
// into it with acknowledgements, as a fleet that keeps its kv-events in JetStream would. Usage:
//   node jetstream.mjs nats://127.0.0.1:PORT STREAM SUBJECT[,SUBJECT...] < messages.txt
import { connect } from "nats";
import { createInterface } from "node:readline";

const [server, stream, subjects] = process.argv.slice(2);
const nc = await connect({ servers: server });
const jsm = await nc.jetstreamManager();
try {
  await jsm.streams.info(stream);
} catch {
  await jsm.streams.add({ name: stream, subjects: subjects.split(",") });
}
const js = nc.jetstream();
const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
let count = 0;
for await (const line of lines) {
  const trimmed = line.trim();
  if (!trimmed) continue;
  const [subject, hex] = trimmed.split(/\s+/);
  await js.publish(subject, Buffer.from(hex, "hex"));
  count++;
}
await nc.close();
console.log(`published ${count}`);
