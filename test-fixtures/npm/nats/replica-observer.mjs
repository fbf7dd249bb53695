// An independent reader of the router's replica-sync stream (docs/replicas.md, "Message format"), written from the
// document and not from the router's code: node's NATS client subscribes to a group's streams, asks each replica
// it hears for a snapshot (a request it encodes itself), decodes batches, heartbeats and snapshots, folds them
// into each replica's live sequences as a peer would, and prints the state as one JSON line whenever it changed:
//   {"replicas": {"r1": {"epoch": "...", "seq": N, "synced": true, "sequences": N,
//                        "ranks": {"ns/instance/dp": {"tokens": N, "blocks": N, "sequences": N}},
//                        "predicted": {"ns/instance/dp": {"predictions": N, "deepest": N}}}},
//    "bindings": {"session": "ns/instance/dp"}, "errors": ["..."]}
// Usage: node replica-observer.mjs nats://127.0.0.1:PORT GROUP   (runs until stdin closes)
import { connect, createInbox } from "nats";

const [server, group] = process.argv.slice(2);
const prefix = `continuum.replicas.${group}.`;
const KIND = { BATCH: 1, HEARTBEAT: 2, SNAPSHOT: 3, REQUEST: 4 };
const OBSERVER = "node-observer";

class Reader {
  constructor(bytes) { this.b = bytes; this.p = 0; }
  left() { return this.b.length - this.p; }
  u8() { if (this.p >= this.b.length) throw new Error("truncated"); return this.b[this.p++]; }
  u64() { // big-endian, kept exact as a BigInt
    if (this.left() < 8) throw new Error("truncated");
    let v = 0n;
    for (let i = 0; i < 8; i++) v = (v << 8n) | BigInt(this.b[this.p++]);
    return v;
  }
  varint() { // unsigned LEB128, at most 10 bytes
    let v = 0n;
    for (let i = 0; i < 10; i++) {
      const x = this.u8();
      v |= BigInt(x & 0x7f) << BigInt(7 * i);
      if ((x & 0x80) === 0) return v;
    }
    throw new Error("varint longer than 10 bytes");
  }
  num(max) { const v = this.varint(); if (v > BigInt(max)) throw new Error(`value ${v} above ${max}`); return Number(v); }
  str(max) {
    const n = this.num(max);
    if (n === 0 || n > this.left()) throw new Error(`string of ${n} bytes`);
    const s = Buffer.from(this.b.subarray(this.p, this.p + n)).toString("utf8");
    this.p += n;
    return s;
  }
  rank() { return `${this.str(256)}/${this.u64()}/${this.num(0xffffffff)}`; }
}

function decode(bytes) {
  const r = new Reader(bytes);
  if (r.u8() !== 0x43 || r.u8() !== 0x52) throw new Error("bad magic");
  const version = r.u8(); // 2: the message carries predictions (approximate mode)
  if (version !== 1 && version !== 2) throw new Error(`version ${version}`);
  const kind = r.u8();
  if (kind < 1 || kind > 4) throw new Error(`kind ${kind}`);
  const m = { kind, replica: r.str(64), epoch: r.u64(), seq: r.varint(), chunk: r.num(4095), chunks: r.num(4096),
    events: [] };
  const count = r.num(4096);
  for (let i = 0; i < count; i++) {
    const type = r.u8();
    const id = r.varint();
    if (type === 1) {
      const decode = r.rank();
      const flag = r.u8();
      if (flag > 1) throw new Error(`prefill flag ${flag}`);
      const prefill = flag === 1 ? r.rank() : null;
      m.events.push({ type: "add", id, decode, prefill, tokens: r.num(2 ** 40), blocks: r.num(2 ** 40) });
    } else if (type === 2) {
      m.events.push({ type: "first", id });
    } else if (type === 3) {
      m.events.push({ type: "end", id });
    } else if (type === 4) {
      m.events.push({ type: "bind", session: r.str(128), rank: r.rank(), ttl: r.num(86400000) });
    } else if (type === 5 && version === 2) {
      const stride = r.num(512);
      if (stride < 16 || (stride & (stride - 1)) !== 0) throw new Error(`stride ${stride}`);
      const n = r.num(48);
      if (n === 0 || n * 8 > r.left()) throw new Error(`${n} keys`);
      const keys = [];
      for (let k = 0; k < n; k++) keys.push(r.u64());
      m.events.push({ type: "predict", id, stride, keys });
    } else {
      throw new Error(`event type ${type}`);
    }
  }
  if (r.left() !== 0) throw new Error(`${r.left()} trailing bytes`);
  return m;
}

function request() { // a snapshot request: the header only, no event
  const id = Buffer.from(OBSERVER, "utf8");
  return Buffer.concat([Buffer.from([0x43, 0x52, 1, KIND.REQUEST, id.length]), id, Buffer.alloc(8),
    Buffer.from([0, 0, 1, 0])]);
}

const replicas = new Map(); // id -> { epoch, seq, live: Map(id -> seq), pending: [], snapshot: [] }
const bindings = new Map();
const errors = [];

function apply(p, e) {
  if (e.type === "add") {
    if (!p.live.has(e.id)) p.live.set(e.id, { ...e, first: false });
  } else if (e.type === "first") {
    const l = p.live.get(e.id);
    if (l) l.first = true;
  } else if (e.type === "end") {
    p.live.delete(e.id);
  } else if (e.type === "bind") {
    bindings.set(e.session, e.rank);
  } else if (e.type === "predict") { // the prefilling rank of its (live) add: the pair's prefill rank, else decode
    const l = p.live.get(e.id);
    if (!l) return;
    const rank = l.prefill ?? l.decode;
    const s = (p.predicted[rank] ||= { predictions: 0, deepest: 0 });
    s.predictions += 1;
    s.deepest = Math.max(s.deepest, e.stride * e.keys.length);
  }
}

const nc = await connect({ servers: server });
const inbox = createInbox();

function ask(id) {
  nc.publish(`${prefix}${id}.snapshot`, request(), { reply: inbox });
}

function onStream(m) {
  let p = replicas.get(m.replica);
  if (!p || m.epoch > p.epoch) {
    p = { epoch: m.epoch, seq: -1n, live: new Map(), pending: [], snapshot: [], predicted: {} };
    replicas.set(m.replica, p);
    ask(m.replica);
  }
  if (m.epoch < p.epoch) return;
  if (p.seq < 0n) { // waiting for the snapshot
    if (m.kind === KIND.BATCH) p.pending.push(m);
    return;
  }
  if (m.kind === KIND.BATCH) {
    if (m.seq !== p.seq + 1n) { p.seq = -1n; p.live.clear(); ask(m.replica); return; }
    m.events.forEach((e) => apply(p, e));
    p.seq = m.seq;
  } else if (m.kind === KIND.HEARTBEAT && m.seq > p.seq) {
    p.seq = -1n; p.live.clear(); ask(m.replica);
  }
}

function onSnapshot(m) {
  const p = replicas.get(m.replica);
  if (!p || m.epoch !== p.epoch || p.seq >= 0n) return;
  p.snapshot[m.chunk] = m;
  if (p.snapshot.filter(Boolean).length < m.chunks) return;
  p.live.clear();
  p.snapshot.forEach((c) => c.events.forEach((e) => apply(p, e)));
  p.seq = m.seq;
  p.snapshot = [];
  for (const b of p.pending.splice(0)) {
    if (b.seq > p.seq) onStream(b);
  }
}

let last = "";
function report() {
  const out = { replicas: {}, bindings: Object.fromEntries(bindings), errors };
  for (const [id, p] of replicas) {
    const ranks = {};
    const add = (rank, tokens, blocks, sequences) => {
      const s = (ranks[rank] ||= { tokens: 0, blocks: 0, sequences: 0 });
      s.tokens += tokens; s.blocks += blocks; s.sequences += sequences;
    };
    for (const l of p.live.values()) { // what a peer adds to each rank (docs/replicas.md, "What is shared")
      if (!l.first) {
        add(l.prefill ?? l.decode, l.tokens, 0, 0);
        if (l.prefill) add(l.prefill, 0, l.blocks, 1);
      }
      add(l.decode, 0, l.blocks, 1);
    }
    out.replicas[id] = { epoch: p.epoch.toString(), seq: Number(p.seq), synced: p.seq >= 0n, sequences: p.live.size,
      ranks, predicted: p.predicted };
  }
  const line = JSON.stringify(out);
  if (line !== last) { last = line; console.log(line); }
}

function handler(snapshot) {
  return (err, msg) => {
    if (err) { errors.push(String(err)); return; }
    try {
      const m = decode(msg.data);
      if (snapshot ? m.kind === KIND.SNAPSHOT : (m.kind === KIND.BATCH || m.kind === KIND.HEARTBEAT)) {
        (snapshot ? onSnapshot : onStream)(m);
      }
    } catch (e) {
      errors.push(`${msg.subject}: ${e.message}`);
    }
    report();
  };
}

nc.subscribe(`${prefix}*`, { callback: handler(false) });
nc.subscribe(inbox, { callback: handler(true) });
await nc.flush();
console.log(JSON.stringify({ ready: true }));
process.stdin.resume();
process.stdin.on("end", async () => { await nc.close(); process.exit(0); });
