package dev.continuum.router.replicas;

import dev.continuum.router.discovery.WorkerId;
import dev.continuum.router.load.SampleKey;
import dev.continuum.router.shim.SharedPredictions;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The replica-sync wire format (docs/replicas.md, "Message format"): a compact binary layout of our own, since
 * no upstream peer reads it. Big-endian; counts and ids as unsigned LEB128 varints.
 *
 * <pre>
 * message = magic "CR" | version (1, or 2 when it carries a predict event) | kind | replica (string) | epoch (8 bytes) | seq (varint)
 *           | chunk (varint) | chunks (varint) | count (varint) | event*
 * event   = 1 add   | id | rank decode | has-prefill (0/1) [rank prefill] | prefill tokens | blocks
 *         | 2 first | id
 *         | 3 end   | id
 *         | 4 bind  | 0 | session (string, at most 128) | rank | ttl in milliseconds (at most a day)
 *         | 5 predict | id | stride (16 doubled, at most 512) | key count (1 to 48) | key (8 bytes)*   (version 2)
 * rank    = namespace (string) | instance id (8 bytes) | dp rank (varint)
 * string  = length (varint, at most 64 for a replica ID, 256 for a namespace) | UTF-8 bytes
 * </pre>
 *
 * <p>The decoder trusts nothing: every count is checked against its bound before anything is allocated, a varint
 * longer than 10 bytes or past the end, a value out of range, or trailing bytes make the whole message
 * {@link Malformed}, and nothing of it is applied.
 */
final class SyncCodec {
    /** Events in one message at most. */
    static final int MAX_EVENTS = 4096;
    static final int MAX_NAMESPACE = 256;
    static final int MAX_REPLICA = 64;
    static final int MAX_CHUNKS = 4096;
    /** Tokens one sequence may carry (the same bound as the active sequences'). */
    static final long MAX_TOKENS = 1L << 40;
    private static final byte M0 = 'C';
    private static final byte M1 = 'R';
    private static final byte VERSION = 1;
    /** The version of a message carrying predictions: a version-1 reader refuses it rather than misread it. */
    private static final byte VERSION_PREDICT = 2;
    private static final int ADD = 1;
    private static final int FIRST = 2;
    private static final int END = 3;
    private static final int BIND = 4;
    private static final int PREDICT = 5;
    static final int MAX_SESSION = 128;
    static final long MAX_TTL_MILLIS = 86_400_000L;

    /** A message that does not follow the format or its bounds; never applied. */
    static final class Malformed extends RuntimeException {
        Malformed(String message) {
            super(message, null, false, false);
        }
    }

    private SyncCodec() {
    }

    // ------------------------------------------------------------------ encoding

    /** A reusable encoder: one message at a time, on one thread. */
    static final class Writer {
        private byte[] buf = new byte[4096];
        private int pos;
        private int countAt;
        private int count;
        private boolean predicts;

        /** Starts a message; events follow. */
        void begin(SyncMessage.Kind kind, String replica, long epoch, long seq, int chunk, int chunks) {
            pos = 0;
            count = 0;
            predicts = false;
            put(M0);
            put(M1);
            put(VERSION);
            put((byte) kind.code);
            string(replica);
            int8(epoch);
            varint(seq);
            varint(chunk);
            varint(chunks);
            countAt = pos;
            // The count is patched at the end: reserve the 2 bytes MAX_EVENTS needs as a varint.
            put((byte) 0x80);
            put((byte) 0);
        }

        void add(SyncEvent event) {
            if (event instanceof SyncEvent.Add a) {
                put((byte) ADD);
                varint(a.id());
                rank(a.decode());
                SampleKey prefill = a.prefill();
                if (prefill == null) {
                    put((byte) 0);
                } else {
                    put((byte) 1);
                    rank(prefill);
                }
                varint(a.prefillTokens());
                varint(a.blocks());
            } else if (event instanceof SyncEvent.Predict p) {
                put((byte) PREDICT);
                varint(p.id());
                varint(p.stride());
                varint(p.keys().length);
                for (long key : p.keys()) {
                    int8(key);
                }
                predicts = true;
            } else if (event instanceof SyncEvent.Bind b) {
                put((byte) BIND);
                varint(0);
                string(b.session());
                rank(b.rank());
                varint(b.ttlMillis());
            } else {
                put((byte) (event instanceof SyncEvent.First ? FIRST : END));
                varint(event.id());
            }
            count++;
        }

        int events() {
            return count;
        }

        int size() {
            return pos;
        }

        /** The finished message (a copy: the writer's buffer is reused). */
        byte[] finish() {
            buf[countAt] = (byte) ((count & 0x7F) | 0x80);
            buf[countAt + 1] = (byte) (count >>> 7);
            buf[2] = predicts ? VERSION_PREDICT : VERSION;
            return Arrays.copyOf(buf, pos);
        }

        private void rank(SampleKey key) {
            string(key.worker().namespace());
            int8(key.worker().instanceId());
            varint(key.dpRank());
        }

        private void string(String s) {
            byte[] b = s.getBytes(StandardCharsets.UTF_8);
            varint(b.length);
            ensure(b.length);
            System.arraycopy(b, 0, buf, pos, b.length);
            pos += b.length;
        }

        private void int8(long v) {
            ensure(8);
            for (int i = 7; i >= 0; i--) {
                buf[pos++] = (byte) (v >>> (i * 8));
            }
        }

        private void varint(long v) {
            ensure(10);
            while ((v & ~0x7FL) != 0) {
                buf[pos++] = (byte) ((v & 0x7F) | 0x80);
                v >>>= 7;
            }
            buf[pos++] = (byte) v;
        }

        private void put(byte b) {
            ensure(1);
            buf[pos++] = b;
        }

        private void ensure(int n) {
            if (pos + n > buf.length) {
                buf = Arrays.copyOf(buf, Math.max(buf.length * 2, pos + n));
            }
        }
    }

    // ------------------------------------------------------------------ decoding

    /** Decodes {@code data}; throws {@link Malformed} on anything outside the format or its bounds. */
    static SyncMessage decode(byte[] data) {
        Reader r = new Reader(data);
        if (r.u8() != M0 || r.u8() != M1) {
            throw new Malformed("bad magic");
        }
        int version = r.u8();
        if (version != VERSION && version != VERSION_PREDICT) {
            throw new Malformed("version " + version);
        }
        SyncMessage.Kind kind = SyncMessage.Kind.of(r.u8());
        String replica = r.string(MAX_REPLICA);
        long epoch = r.int8();
        long seq = r.varint();
        int chunk = (int) r.bounded(MAX_CHUNKS - 1);
        int chunks = (int) r.bounded(MAX_CHUNKS);
        if (chunks < 1 || chunk >= chunks) {
            throw new Malformed("chunk " + chunk + " of " + chunks);
        }
        int count = (int) r.bounded(MAX_EVENTS);
        // Each event takes at least 2 bytes: a count the data cannot hold is refused before the list is sized.
        if (count > r.remaining() / 2) {
            throw new Malformed("count " + count + " past the data");
        }
        List<SyncEvent> events = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            SyncEvent e = event(r);
            if (e instanceof SyncEvent.Predict && version != VERSION_PREDICT) {
                throw new Malformed("predict event in a version " + version + " message");
            }
            events.add(e);
        }
        if (r.remaining() != 0) {
            throw new Malformed(r.remaining() + " trailing bytes");
        }
        return new SyncMessage(kind, replica, epoch, seq, chunk, chunks, events);
    }

    private static SyncEvent event(Reader r) {
        int type = r.u8();
        long id = r.varint();
        return switch (type) {
            case ADD -> {
                SampleKey decode = r.rank();
                int hasPrefill = r.u8();
                if (hasPrefill > 1) {
                    throw new Malformed("prefill flag " + hasPrefill);
                }
                @Nullable SampleKey prefill = hasPrefill == 1 ? r.rank() : null;
                long tokens = r.bounded(MAX_TOKENS);
                long blocks = r.bounded(MAX_TOKENS);
                yield new SyncEvent.Add(id, decode, prefill, tokens, blocks);
            }
            case FIRST -> new SyncEvent.First(id);
            case END -> new SyncEvent.End(id);
            case PREDICT -> predict(r, id);
            case BIND -> new SyncEvent.Bind(r.string(MAX_SESSION), r.rank(), r.bounded(MAX_TTL_MILLIS));
            default -> throw new Malformed("event type " + type);
        };
    }

    private static SyncEvent.Predict predict(Reader r, long id) {
        int stride = (int) r.bounded(SharedPredictions.MAX_STRIDE);
        if (!SharedPredictions.validStride(stride)) {
            throw new Malformed("stride " + stride);
        }
        int n = (int) r.bounded(SharedPredictions.MAX_KEYS);
        if (n == 0 || n > r.remaining() / 8) {
            throw new Malformed(n + " keys");
        }
        long[] keys = new long[n];
        for (int i = 0; i < n; i++) {
            keys[i] = r.int8();
        }
        return new SyncEvent.Predict(id, stride, keys);
    }

    private static final class Reader {
        private final byte[] data;
        private int pos;

        Reader(byte[] data) {
            this.data = data;
        }

        int remaining() {
            return data.length - pos;
        }

        int u8() {
            if (pos >= data.length) {
                throw new Malformed("truncated");
            }
            return data[pos++] & 0xFF;
        }

        long int8() {
            if (remaining() < 8) {
                throw new Malformed("truncated");
            }
            long v = 0;
            for (int i = 0; i < 8; i++) {
                v = (v << 8) | (data[pos++] & 0xFF);
            }
            return v;
        }

        long varint() {
            long v = 0;
            for (int shift = 0; shift < 64; shift += 7) {
                int b = u8();
                if (shift == 63 && (b & 0x7E) != 0) {
                    throw new Malformed("varint overflow");
                }
                v |= (long) (b & 0x7F) << shift;
                if ((b & 0x80) == 0) {
                    return v;
                }
            }
            throw new Malformed("varint longer than 10 bytes");
        }

        long bounded(long max) {
            long v = varint();
            if (v < 0 || v > max) {
                throw new Malformed("value " + Long.toUnsignedString(v) + " above " + max);
            }
            return v;
        }

        String string(int maxBytes) {
            int n = (int) bounded(maxBytes);
            if (n == 0 || n > remaining()) {
                throw new Malformed("string of " + n + " bytes");
            }
            String s = new String(data, pos, n, StandardCharsets.UTF_8);
            pos += n;
            return s;
        }

        SampleKey rank() {
            String namespace = string(MAX_NAMESPACE);
            long instance = int8();
            long dpRank = bounded(0xFFFF_FFFFL);
            return new SampleKey(new WorkerId(namespace, instance), dpRank);
        }
    }
}
