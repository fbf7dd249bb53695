"""An independent reader of the simulator's kv-events, on Debian's python3-zmq and python3-msgpack.

  kv_events.py decode HEX HEX HEX HEX   decode one four-part message given as hex frames, print it as JSON
  kv_events.py sub tcp://HOST:PORT      subscribe to topic kv-events, print "ready", then one JSON line per message

Each message is checked as upstream's event plane frames it: exactly four frames, the topic, the publisher ID and
the sequence as 8-byte big-endian integers, version 1 and a big-endian u32 length before the msgpack envelope,
whose payload must be msgpack bin. Anything else is printed as {"error": ...}.
"""
import json
import struct
import sys

import msgpack


def decode(frames):
    if len(frames) != 4:
        return {"error": "%d frames" % len(frames)}
    if len(frames[1]) != 8 or len(frames[2]) != 8:
        return {"error": "id frames of %d and %d bytes" % (len(frames[1]), len(frames[2]))}
    version, length = struct.unpack(">BI", frames[3][:5])
    if version != 1 or length != len(frames[3]) - 5:
        return {"error": "version %d, length %d of %d" % (version, length, len(frames[3]) - 5)}
    envelope = msgpack.unpackb(frames[3][5:], raw=False)
    payload = envelope["payload"]
    if not isinstance(payload, bytes):
        return {"error": "payload is %s, not bin" % type(payload).__name__}
    envelope["payload"] = msgpack.unpackb(payload, raw=False)
    return {
        "topic": frames[0].decode("utf-8"),
        "publisher_id": struct.unpack(">Q", frames[1])[0],
        "sequence": struct.unpack(">Q", frames[2])[0],
        "envelope": envelope,
    }


def main():
    if sys.argv[1] == "decode":
        print(json.dumps(decode([bytes.fromhex(h) for h in sys.argv[2:]])), flush=True)
        return
    import zmq
    ctx = zmq.Context()
    sub = ctx.socket(zmq.SUB)
    sub.setsockopt(zmq.SUBSCRIBE, b"kv-events")
    sub.connect(sys.argv[2])
    print("ready", flush=True)
    while True:
        print(json.dumps(decode(sub.recv_multipart())), flush=True)


main()
