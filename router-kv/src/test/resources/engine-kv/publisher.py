"""An engine's KV-event publisher for tests, written from vLLM's vllm/distributed/kv_events.py
(ZmqEventPublisher: PUB [topic, seq u64 BE, msgpack batch] plus a ROUTER replay socket that answers a start
sequence with every buffered batch from it and an end marker of seq -1) and SGLang's copy of it
(python/sglang/srt/disaggregation/kv_events.py). Encodes with python3-msgpack, never with the router's code.

  publisher.py PUB_PORT REPLAY_PORT GENERATION TOPIC

GENERATION is "array" (msgspec array_like: SGLang, vLLM before 0.26) or "map" (vLLM 0.26 on: tagged maps,
replay replies with a topic frame). The data socket is an XPUB, so the harness can wait for the router's
subscription instead of sleeping (a PUB cannot tell); its frames are the same as a PUB's.

Commands, one JSON object per line on stdin; each prints "ok" (or "subscribed") when done:
  {"op": "await_sub"}                          wait for a (re)subscription
  {"op": "batch", "seq": N, "events": [...], "publish": true}   encode, buffer for replay, publish unless false
  {"op": "raw", "frames": ["hex", ...]}          publish these frames as they are (hostile input)
  {"op": "forget"}                               empty the replay buffer
Events: {"type": "BlockStored", "hashes": [...], "parent": h|null, "tokens": [...], "block_size": n}
        {"type": "BlockRemoved", "hashes": [...]}, {"type": "AllBlocksCleared"}, or {"raw": <any msgpack value>}
"""
import json
import sys
import time

import msgpack
import zmq

pub_port, replay_port, generation, topic = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
topic_bytes = topic.encode()
ctx = zmq.Context.instance()
pub = ctx.socket(zmq.XPUB)
pub.bind(f"tcp://127.0.0.1:{pub_port}")
replay = ctx.socket(zmq.ROUTER)
replay.bind(f"tcp://127.0.0.1:{replay_port}")
buffer = []  # (seq, payload) as vLLM's deque


def encode_event(e):
    if "raw" in e:
        return e["raw"]
    kind = e["type"]
    if generation == "array":
        if kind == "BlockStored":
            # block_hashes, parent_block_hash, token_ids, block_size, lora_id, medium
            return [kind, e["hashes"], e.get("parent"), e["tokens"], e["block_size"], None, "GPU"]
        if kind == "BlockRemoved":
            return [kind, e["hashes"], "GPU"]
        return [kind]
    if kind == "BlockStored":
        return {"type": kind, "block_hashes": e["hashes"], "parent_block_hash": e.get("parent"),
                "token_ids": e["tokens"], "block_size": e["block_size"], "lora_id": None, "medium": "GPU",
                "lora_name": None, "extra_keys": None, "group_idx": 0, "kv_cache_spec_kind": "full_attention"}
    if kind == "BlockRemoved":
        return {"type": kind, "block_hashes": e["hashes"], "medium": "GPU", "group_idx": 0}
    return {"type": kind}


def encode_batch(events):
    evs = [encode_event(e) for e in events]
    if generation == "array":
        return msgpack.packb([time.time(), evs, 0])
    return msgpack.packb({"ts": time.time(), "events": evs, "data_parallel_rank": 0})


def serve_replay():
    frames = replay.recv_multipart()
    if len(frames) != 3:
        return
    client, _, start = frames
    start_seq = int.from_bytes(start, "big")
    for seq, payload in buffer:
        if seq >= start_seq:
            if generation == "array":
                replay.send_multipart([client, b"", seq.to_bytes(8, "big"), payload])
            else:
                replay.send_multipart([client, b"", topic_bytes, seq.to_bytes(8, "big"), payload])
    end = (-1).to_bytes(8, "big", signed=True)
    if generation == "array":
        replay.send_multipart([client, b"", end, b""])
    else:
        replay.send_multipart([client, b"", topic_bytes, end, b""])


def run(cmd):
    op = cmd["op"]
    if op == "await_sub":
        while True:
            msg = pub.recv()
            if msg[:1] == b"\x01":
                return "subscribed"
    if op == "batch":
        seq = cmd["seq"]
        payload = encode_batch(cmd["events"])
        buffer.append((seq, payload))
        if cmd.get("publish", True):
            pub.send_multipart([topic_bytes, seq.to_bytes(8, "big"), payload])
        return "ok"
    if op == "raw":
        pub.send_multipart([bytes.fromhex(f) for f in cmd["frames"]])
        return "ok"
    if op == "forget":
        buffer.clear()
        return "ok"
    return "unknown"


poller = zmq.Poller()
poller.register(replay, zmq.POLLIN)
poller.register(sys.stdin, zmq.POLLIN)
print("ready", flush=True)
while True:
    for sock, _ in poller.poll():
        if sock is replay:
            serve_replay()
        else:
            line = sys.stdin.readline()
            if not line:
                sys.exit(0)
            print(run(json.loads(line)), flush=True)
