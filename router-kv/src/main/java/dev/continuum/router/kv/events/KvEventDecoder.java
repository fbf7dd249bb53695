package dev.continuum.router.kv.events;

import dev.continuum.router.kv.events.MsgpackReader.Kind;
import dev.continuum.router.kv.events.MsgpackReader.Malformed;
import java.nio.charset.StandardCharsets;

/**
 * Decodes the payload of one kv-events envelope: a {@code RouterEvent} as ai-dynamo/dynamo
 * {@code lib/kv-router/src/protocols.rs} serializes it with {@code rmp_serde::to_vec_named} (structs as maps
 * with string keys, unit variants as strings, newtype variants as one-entry maps), or an array of them:
 *
 * <pre>
 * RouterEvent  {worker_id: u64, storage_tier: "device"|"host_pinned"|"disk"|"external",
 *               residency_domain?: "worker"|"cache_owner", event: KvCacheEvent, state_source?: any}
 * KvCacheEvent {event_id: u64, data: KvCacheEventData, dp_rank: u32 (default 0)}
 * data         {"stored": {parent_hash: u64|nil, start_position?: u32|nil,
 *                          blocks: [{block_hash: u64, tokens_hash: u64, mm_extra_info?: any}]}}
 *            | {"removed": {block_hashes: [u64]}}
 *            | "cleared"
 * </pre>
 *
 * Positional (array) forms of every struct are accepted too, and unknown keys are skipped, so newer optional
 * fields pass. Only the device tier with the worker's own residency (no {@code residency_domain}, or
 * {@code "worker"}) is marked indexable. Bounds: at most {@link KvEvents#MAX_EVENTS} events and
 * {@link KvEvents#MAX_BLOCKS} blocks per message. A record that breaks a rule is dropped and counted in
 * {@link KvEvents#malformed()}; the decoder skips it and goes on when the msgpack structure allows, and never
 * throws. Not thread-safe: one decoder per thread (the index writer owns one).
 */
public final class KvEventDecoder {
    private static final byte[][] ROUTER_EVENT_KEYS = keys("worker_id", "storage_tier", "residency_domain", "event");
    private static final byte[][] EVENT_KEYS = keys("event_id", "data", "dp_rank");
    private static final byte[][] VARIANTS = keys("stored", "removed", "cleared");
    private static final byte[][] STORED_KEYS = keys("parent_hash", "blocks");
    private static final byte[][] BLOCK_KEYS = keys("block_hash", "tokens_hash");
    private static final byte[][] REMOVED_KEYS = keys("block_hashes");
    private static final byte[][] DEVICE = keys("device");
    private static final byte[][] WORKER = keys("worker");
    private static final long MAX_DP_RANK = 0xFFFF_FFFFL;

    private final MsgpackReader in = new MsgpackReader();
    private final MsgpackReader probe = new MsgpackReader();
    private KvEvents out = new KvEvents();

    /** Decodes {@code length} bytes of {@code payload} from {@code offset} into {@code events} (cleared first). */
    public void decode(byte[] payload, int offset, int length, KvEvents events) {
        events.clear();
        out = events;
        in.reset(payload, offset, length);
        try {
            if (in.peek() == Kind.ARRAY && isBatch(payload, offset, length)) {
                int n = in.arrayHeader();
                for (int i = 0; i < n; i++) {
                    if (!record(i >= KvEvents.MAX_EVENTS)) {
                        events.malformed += n - i - 1; // the rest cannot be read
                        return;
                    }
                }
            } else if (!record(false)) {
                return;
            }
            if (in.remaining() != 0) {
                events.malformed++;
            }
        } catch (Malformed e) {
            events.malformed++;
        }
    }

    /** An array whose first element is itself a map or an array is a batch; one starting with an integer is a
     *  positional RouterEvent. */
    private boolean isBatch(byte[] payload, int offset, int length) throws Malformed {
        probe.reset(payload, offset, length);
        if (probe.arrayHeader() == 0) {
            return true;
        }
        Kind first = probe.peek();
        return first == Kind.MAP || first == Kind.ARRAY;
    }

    /**
     * One RouterEvent: decoded into the next slot, or dropped (counted) and skipped. False when the input
     * cannot be read past it.
     */
    private boolean record(boolean excess) {
        int start = in.position();
        int slot = out.size;
        int blocksBefore = out.blocks;
        try {
            if (excess) {
                throw MsgpackReader.MALFORMED;
            }
            routerEvent(slot);
            out.size++;
            return true;
        } catch (Malformed e) {
            out.blocks = blocksBefore;
            out.malformed++;
            in.position(start);
            try {
                in.skip();
                return true;
            } catch (Malformed unreadable) {
                return false;
            }
        }
    }

    private void routerEvent(int slot) throws Malformed {
        boolean worker = false;
        boolean event = false;
        boolean device = true; // storage_tier defaults to device
        boolean ownResidency = true;
        if (in.peek() == Kind.MAP) {
            int n = in.mapHeader();
            for (int i = 0; i < n; i++) {
                switch (in.stringIndex(ROUTER_EVENT_KEYS)) {
                    case 0 -> {
                        out.workerId[slot] = in.u64(false);
                        worker = true;
                    }
                    case 1 -> device = tier();
                    case 2 -> ownResidency = residency();
                    case 3 -> {
                        kvCacheEvent(slot);
                        event = true;
                    }
                    default -> in.skip();
                }
            }
        } else {
            // [worker_id, storage_tier, (residency_domain,) event, (state_source)]
            int n = in.arrayHeader();
            if (n < 3) {
                throw MsgpackReader.MALFORMED;
            }
            out.workerId[slot] = in.u64(false);
            device = tier();
            int used = 2;
            if (in.peek() == Kind.STRING) {
                ownResidency = residency();
                used++;
            }
            if (used == n) {
                throw MsgpackReader.MALFORMED;
            }
            kvCacheEvent(slot);
            used++;
            worker = true;
            event = true;
            for (int i = used; i < n; i++) {
                in.skip();
            }
        }
        if (!worker || !event) {
            throw MsgpackReader.MALFORMED;
        }
        out.indexable[slot] = device && ownResidency;
    }

    private boolean tier() throws Malformed {
        if (in.peek() != Kind.STRING) {
            throw MsgpackReader.MALFORMED;
        }
        return in.stringIndex(DEVICE) == 0; // other tiers, known or newer, are counted, not indexed
    }

    private boolean residency() throws Malformed {
        if (in.peek() != Kind.STRING) {
            throw MsgpackReader.MALFORMED; // upstream reads nil or a non-string as invalid
        }
        return in.stringIndex(WORKER) == 0;
    }

    private void kvCacheEvent(int slot) throws Malformed {
        long dpRank = 0;
        boolean id = false;
        boolean data = false;
        if (in.peek() == Kind.MAP) {
            int n = in.mapHeader();
            for (int i = 0; i < n; i++) {
                switch (in.stringIndex(EVENT_KEYS)) {
                    case 0 -> {
                        out.eventId[slot] = in.u64(false);
                        id = true;
                    }
                    case 1 -> {
                        data(slot);
                        data = true;
                    }
                    case 2 -> dpRank = rank();
                    default -> in.skip();
                }
            }
        } else {
            int n = in.arrayHeader(); // [event_id, data, (dp_rank)]
            if (n < 2) {
                throw MsgpackReader.MALFORMED;
            }
            out.eventId[slot] = in.u64(false);
            data(slot);
            id = true;
            data = true;
            if (n > 2) {
                dpRank = rank();
            }
            for (int i = 3; i < n; i++) {
                in.skip();
            }
        }
        if (!id || !data) {
            throw MsgpackReader.MALFORMED;
        }
        out.dpRank[slot] = dpRank;
    }

    private long rank() throws Malformed {
        long rank = in.u64(false);
        if (Long.compareUnsigned(rank, MAX_DP_RANK) > 0) {
            throw MsgpackReader.MALFORMED;
        }
        return rank;
    }

    private void data(int slot) throws Malformed {
        out.hasParent[slot] = false;
        out.blockFrom[slot] = out.blocks;
        out.blockCount[slot] = 0;
        Kind kind = in.peek();
        if (kind == Kind.STRING) {
            if (in.stringIndex(VARIANTS) != 2) {
                throw MsgpackReader.MALFORMED;
            }
            out.kind[slot] = KvEvents.Kind.CLEARED;
            return;
        }
        if (in.mapHeader() != 1) {
            throw MsgpackReader.MALFORMED;
        }
        switch (in.stringIndex(VARIANTS)) {
            case 0 -> {
                out.kind[slot] = KvEvents.Kind.STORED;
                stored(slot);
            }
            case 1 -> {
                out.kind[slot] = KvEvents.Kind.REMOVED;
                removed(slot);
            }
            case 2 -> {
                out.kind[slot] = KvEvents.Kind.CLEARED;
                in.skip();
            }
            default -> throw MsgpackReader.MALFORMED;
        }
    }

    private void stored(int slot) throws Malformed {
        boolean blocks = false;
        if (in.peek() == Kind.MAP) {
            int n = in.mapHeader();
            for (int i = 0; i < n; i++) {
                switch (in.stringIndex(STORED_KEYS)) {
                    case 0 -> parent(slot);
                    case 1 -> {
                        blocks(slot);
                        blocks = true;
                    }
                    default -> in.skip();
                }
            }
        } else {
            // [parent_hash, (start_position,) blocks, ...]
            int n = in.arrayHeader();
            if (n < 2) {
                throw MsgpackReader.MALFORMED;
            }
            parent(slot);
            int used = 1;
            if (in.peek() != Kind.ARRAY) {
                in.skip(); // start_position
                used++;
            }
            if (used == n) {
                throw MsgpackReader.MALFORMED;
            }
            blocks(slot);
            blocks = true;
            for (int i = used + 1; i < n; i++) {
                in.skip();
            }
        }
        if (!blocks) {
            throw MsgpackReader.MALFORMED;
        }
    }

    private void parent(int slot) throws Malformed {
        if (in.tryNil()) {
            out.hasParent[slot] = false;
        } else {
            out.parentHash[slot] = in.u64(true);
            out.hasParent[slot] = true;
        }
    }

    private void blocks(int slot) throws Malformed {
        int n = in.arrayHeader();
        int from = reserve(slot, n);
        for (int i = 0; i < n; i++) {
            boolean blockHash = false;
            boolean tokensHash = false;
            if (in.peek() == Kind.MAP) {
                int fields = in.mapHeader();
                for (int f = 0; f < fields; f++) {
                    switch (in.stringIndex(BLOCK_KEYS)) {
                        case 0 -> {
                            out.blockHashes[from + i] = in.u64(true);
                            blockHash = true;
                        }
                        case 1 -> {
                            out.tokensHashes[from + i] = in.u64(false);
                            tokensHash = true;
                        }
                        default -> in.skip(); // mm_extra_info: already folded into tokens_hash
                    }
                }
            } else {
                int fields = in.arrayHeader(); // [block_hash, tokens_hash, (mm_extra_info)]
                if (fields < 2) {
                    throw MsgpackReader.MALFORMED;
                }
                out.blockHashes[from + i] = in.u64(true);
                out.tokensHashes[from + i] = in.u64(false);
                blockHash = true;
                tokensHash = true;
                for (int f = 2; f < fields; f++) {
                    in.skip();
                }
            }
            if (!blockHash || !tokensHash) {
                throw MsgpackReader.MALFORMED;
            }
        }
    }

    private void removed(int slot) throws Malformed {
        boolean hashes = false;
        if (in.peek() == Kind.MAP) {
            int n = in.mapHeader();
            for (int i = 0; i < n; i++) {
                if (in.stringIndex(REMOVED_KEYS) == 0) {
                    removedHashes(slot);
                    hashes = true;
                } else {
                    in.skip();
                }
            }
        } else {
            int n = in.arrayHeader();
            if (n < 1) {
                throw MsgpackReader.MALFORMED;
            }
            removedHashes(slot);
            hashes = true;
            for (int i = 1; i < n; i++) {
                in.skip();
            }
        }
        if (!hashes) {
            throw MsgpackReader.MALFORMED;
        }
    }

    private void removedHashes(int slot) throws Malformed {
        int n = in.arrayHeader();
        int from = reserve(slot, n);
        for (int i = 0; i < n; i++) {
            out.blockHashes[from + i] = in.u64(true);
        }
    }

    /** Room for {@code n} more blocks of this message; a repeated field replaces the earlier one's blocks. */
    private int reserve(int slot, int n) throws Malformed {
        int from = out.blockFrom[slot];
        if (n > KvEvents.MAX_BLOCKS - from) {
            throw MsgpackReader.MALFORMED;
        }
        out.blocks = from + n;
        out.blockCount[slot] = n;
        return from;
    }

    private static byte[][] keys(String... names) {
        byte[][] keys = new byte[names.length][];
        for (int i = 0; i < names.length; i++) {
            keys[i] = names[i].getBytes(StandardCharsets.US_ASCII);
        }
        return keys;
    }
}
