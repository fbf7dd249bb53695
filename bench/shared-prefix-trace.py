#!/usr/bin/env python3
"""A Mooncake-format trace (one JSON object a line: timestamp ms, input_length, output_length, hash_ids of
512-token blocks) where a few long shared prefixes come back again and again, spaced out: each request takes one of
DOCS documents of DOC_BLOCKS blocks and adds QUESTION_BLOCKS blocks of its own, one request every GAP_MS. With
bench/kv-replay.sh's DECODE_MS the worker that holds a document is often the one still busy answering it, which is
where a router gives a cached prefix up for load: the avoidable prefill tokens of issue 33.

    bench/shared-prefix-trace.py [REQUESTS] > trace.jsonl      (environment: DOCS, DOC_BLOCKS, QUESTION_BLOCKS,
                                                                 GAP_MS, SEED)
"""
import json
import os
import random
import sys

requests = int(sys.argv[1]) if len(sys.argv) > 1 else 300
docs = int(os.environ.get("DOCS", "6"))
doc_blocks = int(os.environ.get("DOC_BLOCKS", "8"))
question_blocks = int(os.environ.get("QUESTION_BLOCKS", "1"))
gap_ms = int(os.environ.get("GAP_MS", "250"))
rng = random.Random(int(os.environ.get("SEED", "33")))

next_id = docs * doc_blocks  # document d holds ids d*doc_blocks .. (d+1)*doc_blocks-1; questions take fresh ids
for i in range(requests):
    d = rng.randrange(docs)
    ids = list(range(d * doc_blocks, (d + 1) * doc_blocks)) + list(range(next_id, next_id + question_blocks))
    next_id += question_blocks
    print(json.dumps({"timestamp": i * gap_ms, "input_length": len(ids) * 512, "output_length": 8,
                      "hash_ids": ids}))
