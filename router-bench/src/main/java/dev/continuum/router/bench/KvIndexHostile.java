package dev.continuum.router.bench;

import dev.continuum.router.discovery.PublisherId;
import dev.continuum.router.discovery.WorkerId;
import dev.continuum.router.kv.index.IndexLimits;
import dev.continuum.router.kv.index.KvEventResult;
import dev.continuum.router.kv.index.KvIndexWriter;
import dev.continuum.router.kv.index.RadixIndex;
import dev.continuum.router.load.DpRanks;
import dev.continuum.router.eventplane.zmtp.ZmtpMessage;
import dev.continuum.router.shim.BlockHashes;
import dev.continuum.router.shim.OverlapScores;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.msgpack.core.MessageBufferPacker;
import org.jspecify.annotations.Nullable;
import org.msgpack.core.MessagePack;

/**
 * A hostile kv-events publisher against the index, through the real path ({@code KvIndexWriter.onMessage}:
 * frame and envelope checks, the bounded queue, the writer thread's decoder, gate and index), measured on the
 * read side the picker uses (docs/benchmarks.md, "KV index").
 *
 * <p>Eight honest ranks are filled from a Mooncake-shaped trace ({@link KvTrace}). Then lookups of that trace's
 * requests are timed in rounds alternating without and with one hostile publisher sending, as fast as
 * {@code onMessage} takes them, a rotation of: {@code stored} chains of random hashes for a rank its worker's
 * card declares (so they are admitted and drive the index to its ceilings), events for a {@code dp_rank} the
 * card does not declare, chains anchored at a {@code parent_hash} never stored, and frames of about 1 MiB (128
 * events of random blocks, past the decoder's block bound) alternating with frames declaring just over 1 MiB.
 * Prints the lookup percentiles of each round, their ratio, the index's counts against its ceilings, the
 * heap after a full collection, and the events by result.
 *
 * <p>Run: {@code java -Xmx512m -cp router-bench/target/benchmarks.jar dev.continuum.router.bench.KvIndexHostile
 * [rounds] [lookups per round]}.
 */
public final class KvIndexHostile {
    private static final String NS = "dynamo";
    private static final int HONEST = 8;
    private static final long HOSTILE_WORKER = 666;
    /** Ranks the hostile worker's card declares: together they may hold as many blocks as the node ceiling. */
    private static final int HOSTILE_RANKS = 4;

    private KvIndexHostile() {
    }

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 3;
        int lookups = args.length > 1 ? Integer.parseInt(args[1]) : 200_000;
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        KvIndexWriter writer = new KvIndexWriter(registry, IndexLimits.DEFAULT);
        writer.start().join();
        Map<WorkerId, DpRanks> fleet = new HashMap<>();
        for (int w = 0; w < HONEST; w++) {
            fleet.put(new WorkerId(NS, 100 + w), DpRanks.RANK_ZERO);
        }
        fleet.put(new WorkerId(NS, HOSTILE_WORKER), new DpRanks(0, HOSTILE_RANKS)); // ranks 0..3 only
        writer.onFleet(fleet, 1);

        KvTrace trace = KvTrace.load("synthetic", 20_000, 7);
        long sent = fillHonest(writer, trace);
        awaitProcessed(writer, sent + 1);
        RadixIndex index = writer.index();
        System.out.printf("honest index: %,d nodes, %,d ownerships%n", index.nodes(), index.ownerships());

        BlockHashes[] requests = new BlockHashes[trace.requests()];
        for (int r = 0; r < requests.length; r++) {
            requests[r] = new BlockHashes(512, trace.tokens[r]);
        }
        Hostile hostile = new Hostile(writer);
        OverlapScores out = new OverlapScores(64);
        long[] sample = new long[lookups];
        measure(index, requests, out, sample); // warm-up
        for (int round = 0; round < rounds; round++) {
            long contended = index.contendedReads();
            long[] quiet = measure(index, requests, out, sample);
            long quietContended = index.contendedReads() - contended;
            long applied = writer.processed();
            hostile.start();
            long[] attacked = measure(index, requests, out, sample);
            long messages = hostile.stop();
            System.out.printf("  lookups answered empty after racing writes: %,d without, %,d with; writer"
                            + " applied %,d messages during the attack; at most %,d nodes, %,d ownerships%n",
                    quietContended, index.contendedReads() - contended - quietContended,
                    writer.processed() - applied, hostile.maxNodes, hostile.maxOwnerships);
            awaitQueueDrained(writer);
            System.out.printf("round %d: without p50 %,d ns p99 %,d ns p99.9 %,d ns | with (%,d hostile messages)"
                            + " p50 %,d ns p99 %,d ns p99.9 %,d ns | ratio p50 %.2f p99 %.2f%n", round, quiet[0],
                    quiet[1], quiet[2], messages, attacked[0], attacked[1], attacked[2],
                    attacked[0] / (double) quiet[0], attacked[1] / (double) quiet[1]);
        }
        IndexLimits limits = IndexLimits.DEFAULT;
        System.out.printf("index after: %,d nodes (ceiling %,d), %,d ownerships (ceiling %,d)%n", index.nodes(),
                limits.maxNodes(), index.ownerships(), limits.maxOwnerships());
        System.gc();
        System.gc();
        long heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
        System.out.printf("heap used after full collections: %.1f MiB (max %.1f MiB)%n", heap / 1048576.0,
                Runtime.getRuntime().maxMemory() / 1048576.0);
        for (KvEventResult result : KvEventResult.values()) {
            System.out.printf("events %s: %,.0f%n", result.label(), writer.metrics().total(result));
        }
        writer.stop().join();
    }

    /** Each honest rank stores the trace's requests dealt to it, root-anchored; returns the messages sent. */
    private static long fillHonest(KvIndexWriter writer, KvTrace trace) {
        long[] eventIds = new long[HONEST];
        long sent = 0;
        for (int r = 0; r < trace.requests(); r++) {
            int w = r % HONEST;
            long worker = 100 + w;
            PublisherId publisher = new PublisherId(NS, 0x1000 + w);
            Wire.Framed message = Wire.message(publisher.publisherId(), sent, Wire.stored(worker, eventIds[w]++, 0,
                    null, trace.engine[r], trace.tokens[r], trace.tokens[r].length));
            while (true) { // the writer never saw a message its full queue dropped: send it again
                double before = writer.metrics().total(KvEventResult.QUEUE_FULL);
                writer.onMessage(publisher, message.message());
                if (writer.metrics().total(KvEventResult.QUEUE_FULL) == before) {
                    break;
                }
                Thread.onSpinWait();
            }
            sent++;
        }
        return sent;
    }

    /** Waits until the writer has caught up (two reads of its progress a little apart agree). */
    private static void awaitQueueDrained(KvIndexWriter writer) throws InterruptedException {
        long before;
        do {
            before = writer.processed();
            Thread.sleep(200); // a main program pacing itself, not a test
        } while (writer.processed() != before);
    }

    private static void awaitProcessed(KvIndexWriter writer, long messages) throws InterruptedException {
        while (writer.processed() < messages) {
            Thread.sleep(10); // a main program waiting for another thread, not a test
        }
    }

    /** p50, p99 and p99.9 of {@code sample.length} timed lookups, in ns. */
    private static long[] measure(RadixIndex index, BlockHashes[] requests, OverlapScores out, long[] sample) {
        int r = 0;
        for (int i = 0; i < sample.length; i++) {
            long start = System.nanoTime();
            index.findMatches(requests[r], out);
            sample[i] = System.nanoTime() - start;
            r = r + 1 == requests.length ? 0 : r + 1;
        }
        Arrays.sort(sample);
        return new long[] {sample[sample.length / 2], sample[(int) (sample.length * 0.99)],
            sample[(int) (sample.length * 0.999)]};
    }

    /**
     * The hostile publisher's thread, sending a pre-encoded rotation (so its own CPU goes to sending); each
     * message's {@code event_id}s are patched before it is sent, so the declared ranks' events stay in order
     * (no replays) and only the writer's own drops (a full queue) show as gaps.
     */
    private static final class Hostile {
        private final KvIndexWriter writer;
        private final PublisherId publisher = new PublisherId(NS, 0x6666);
        private final List<Wire.Framed> rotation = new ArrayList<>();
        /** Per rotation entry, the declared rank whose cursor its event ids follow, or -1. */
        private final List<Integer> rankOf = new ArrayList<>();
        private final long[] nextId = new long[HOSTILE_RANKS];
        private final AtomicBoolean running = new AtomicBoolean();
        private final AtomicLong sent = new AtomicLong();
        private volatile int maxNodes;
        private volatile int maxOwnerships;
        private @Nullable Thread thread;

        Hostile(KvIndexWriter writer) {
            this.writer = writer;
            SplittableRandom random = new SplittableRandom(666);
            long seq = 0;
            int chain = 128;
            for (int i = 0; i < 64; i++) {
                long[] engine = randoms(random, chain);
                long[] tokens = randoms(random, chain);
                int rank = (i / 8) % HOSTILE_RANKS;
                Wire.Framed message = switch (i % 8) {
                    // Random hashes for declared ranks: admitted, up to the ceilings.
                    case 0, 1, 2, 3 -> Wire.message(publisher.publisherId(), seq++,
                            Wire.stored(HOSTILE_WORKER, 0, rank, null, engine, tokens, chain));
                    // A rank the card does not declare.
                    case 4 -> Wire.message(publisher.publisherId(), seq++,
                            Wire.stored(HOSTILE_WORKER, 0, 7, null, engine, tokens, chain));
                    // A chain whose parent was never stored: it never reaches the root.
                    case 5, 6 -> Wire.message(publisher.publisherId(), seq++,
                            Wire.stored(HOSTILE_WORKER, 0, rank, random.nextLong(), engine, tokens, chain));
                    // About 1 MiB, past the decoder's block bound; every other time a frame declaring more.
                    default -> i % 16 == 7
                            ? Wire.message(publisher.publisherId(), seq++, Wire.megabyte(HOSTILE_WORKER, rank, random))
                            : Wire.oversized(publisher.publisherId(), seq++);
                };
                rotation.add(message);
                rankOf.add(i % 8 == 4 || (i % 8 == 7 && i % 16 != 7) ? -1 : rank);
            }
        }

        void start() {
            running.set(true);
            Thread t = new Thread(() -> {
                SplittableRandom random = new SplittableRandom(System.nanoTime());
                int i = 0;
                RadixIndex index = writer.index();
                while (running.get()) {
                    int rank = rankOf.get(i);
                    Wire.Framed message = rotation.get(i);
                    if (rank >= 0) {
                        message.eventId(nextId[rank]++);
                    }
                    message.randomize(random); // new random hashes for every send
                    writer.onMessage(publisher, message.message());
                    i = i + 1 == rotation.size() ? 0 : i + 1;
                    if ((sent.incrementAndGet() & 255) == 0) {
                        maxNodes = Math.max(maxNodes, index.nodes());
                        maxOwnerships = Math.max(maxOwnerships, index.ownerships());
                    }
                }
            }, "hostile-publisher");
            t.start();
            thread = t;
        }

        long stop() throws InterruptedException {
            running.set(false);
            Thread t = thread;
            if (t != null) {
                t.join();
            }
            return sent.getAndSet(0);
        }

        private static long[] randoms(SplittableRandom random, int n) {
            long[] a = new long[n];
            for (int i = 0; i < n; i++) {
                a[i] = random.nextLong();
            }
            return a;
        }
    }

    /** kv-events as upstream's publishers frame them (the layout docs/kv-routing.md describes). */
    static final class Wire {
        private Wire() {
        }

        /** A RouterEvent payload and where its {@code event_id}s sit (each a fixed-width uint64). */
        record Payload(byte[] bytes, int[] eventIdAt, int blocksAt, int blocks) {
        }

        /** A framed message whose payload's event ids can be rewritten in place before each send. */
        record Framed(ZmtpMessage message, byte[] all, int payloadAt, int[] eventIdAt, int blocksAt, int blocks) {
            void eventId(long id) {
                for (int at : eventIdAt) {
                    putLong(all, payloadAt + at + 1, id);
                }
            }

            /** Fresh random hashes for every block of the (single-event) chain. */
            void randomize(SplittableRandom random) {
                for (int i = 0, at = payloadAt + blocksAt; i < blocks; i++, at += BLOCK_BYTES) {
                    putLong(all, at + BLOCK_HASH_AT, random.nextLong());
                    putLong(all, at + TOKENS_HASH_AT, random.nextLong());
                }
            }
        }

        static Payload stored(long worker, long eventId, long dpRank, @Nullable Long parent, long[] engine,
                              long[] tokens, int n) {
            try (MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
                int at = storedEvent(p, worker, eventId, dpRank, parent, engine, tokens, n);
                byte[] bytes = p.toByteArray();
                // The blocks run up to the trailing "dp_rank" key and its value.
                int blocksAt = bytes.length - 1 - 7 - 1 - n * BLOCK_BYTES;
                return new Payload(bytes, new int[] {at}, blocksAt, n);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        /** Writes one stored RouterEvent; returns the offset of its event_id's uint64 marker. */
        private static int storedEvent(MessageBufferPacker p, long worker, long eventId, long dpRank,
                                       @Nullable Long parent, long[] engine, long[] tokens, int n)
                throws IOException {
            p.packMapHeader(3).packString("worker_id");
            u64(p, worker);
            p.packString("storage_tier").packString("device");
            p.packString("event").packMapHeader(3).packString("event_id");
            p.flush();
            int eventIdAt = (int) p.getTotalWrittenBytes();
            byte[] id = new byte[9];
            id[0] = (byte) 0xcf;
            putLong(id, 1, eventId);
            p.writePayload(id);
            p.packString("data").packMapHeader(1).packString("stored").packMapHeader(3);
            p.packString("parent_hash");
            if (parent == null) {
                p.packNil();
            } else {
                u64(p, parent);
            }
            p.packString("start_position").packNil();
            p.packString("blocks").packArrayHeader(n);
            for (int i = 0; i < n; i++) {
                p.packMapHeader(3).packString("block_hash");
                fixedU64(p, engine[i]);
                p.packString("tokens_hash");
                fixedU64(p, tokens[i]);
                p.packString("mm_extra_info").packNil();
            }
            p.packString("dp_rank").packLong(dpRank);
            return eventIdAt;
        }

        /** A batch of 128 root-anchored events of random blocks, just under 1 MiB. */
        static Payload megabyte(long worker, int rank, SplittableRandom random) {
            int events = 128;
            int blocks = 138;
            int[] ids = new int[events];
            try (MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
                p.packArrayHeader(events);
                for (int e = 0; e < events; e++) {
                    ids[e] = storedEvent(p, worker, 0, rank, null, Hostile.randoms(random, blocks),
                            Hostile.randoms(random, blocks), blocks);
                }
                byte[] payload = p.toByteArray();
                if (payload.length > KvIndexWriter.MAX_PAYLOAD_BYTES - 256) {
                    throw new IllegalStateException("payload " + payload.length + " bytes");
                }
                return new Payload(payload, ids, 0, 0);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        /** A uint64 always in its 9-byte form, so every block of a chain has the same size (BLOCK_BYTES). */
        private static void fixedU64(MessageBufferPacker p, long bits) throws IOException {
            byte[] b = new byte[9];
            b[0] = (byte) 0xcf;
            putLong(b, 1, bits);
            p.writePayload(b);
        }

        /** One block's map with fixed-width hashes, and where its two hashes' big-endian bytes start in it. */
        static final int BLOCK_BYTES = 1 + 11 + 9 + 12 + 9 + 14 + 1;
        static final int BLOCK_HASH_AT = 1 + 11 + 1;
        static final int TOKENS_HASH_AT = 1 + 11 + 9 + 12 + 1;

        private static void u64(MessageBufferPacker p, long bits) throws IOException {
            p.packBigInteger(new BigInteger(Long.toUnsignedString(bits)));
        }

        /** The four event-plane frames around {@code payload}, in one array as the subscriber assembles them. */
        static Framed message(long publisherId, long sequence, Payload event) {
            byte[] payload = event.bytes();
            byte[] envelope;
            try (MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
                p.packMapHeader(5).packString("publisher_id");
                u64(p, publisherId);
                p.packString("sequence");
                u64(p, sequence);
                p.packString("published_at").packLong(1_796_083_200_000L);
                p.packString("topic").packString("kv-events");
                p.packString("payload").packBinaryHeader(payload.length).writePayload(payload);
                envelope = p.toByteArray();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            byte[] frame = new byte[5 + envelope.length];
            frame[0] = 1;
            putInt(frame, 1, envelope.length);
            System.arraycopy(envelope, 0, frame, 5, envelope.length);
            byte[] topic = "kv-events".getBytes(StandardCharsets.US_ASCII);
            ZmtpMessage message = parts(topic, be(publisherId), be(sequence), frame);
            // The payload is the envelope's last field: it ends the frame, which ends the message.
            int payloadAt = message.offset(3) + frame.length - payload.length;
            return new Framed(message, message.array(), payloadAt, event.eventIdAt(), event.blocksAt(),
                    event.blocks());
        }

        /** A frame whose envelope length says just over 1 MiB: refused before the envelope is read. */
        static Framed oversized(long publisherId, long sequence) {
            byte[] frame = new byte[5 + 64];
            frame[0] = 1;
            putInt(frame, 1, KvIndexWriter.MAX_PAYLOAD_BYTES + 1024);
            ZmtpMessage message = parts("kv-events".getBytes(StandardCharsets.US_ASCII), be(publisherId),
                    be(sequence), frame);
            return new Framed(message, message.array(), 0, new int[0], 0, 0);
        }

        private static void putLong(byte[] a, int at, long v) {
            for (int i = 7; i >= 0; i--) {
                a[at + i] = (byte) v;
                v >>>= 8;
            }
        }

        private static void putInt(byte[] a, int at, int v) {
            a[at] = (byte) (v >>> 24);
            a[at + 1] = (byte) (v >>> 16);
            a[at + 2] = (byte) (v >>> 8);
            a[at + 3] = (byte) v;
        }

        private static byte[] be(long v) {
            byte[] b = new byte[8];
            for (int i = 7; i >= 0; i--) {
                b[i] = (byte) v;
                v >>>= 8;
            }
            return b;
        }

        private static ZmtpMessage parts(byte[]... parts) {
            int total = 0;
            for (byte[] part : parts) {
                total += part.length;
            }
            byte[] all = new byte[total];
            int[] offsets = new int[parts.length];
            int[] lengths = new int[parts.length];
            int at = 0;
            for (int i = 0; i < parts.length; i++) {
                offsets[i] = at;
                lengths[i] = parts[i].length;
                System.arraycopy(parts[i], 0, all, at, parts[i].length);
                at += parts[i].length;
            }
            return new ZmtpMessage() {
                @Override
                public int parts() {
                    return offsets.length;
                }

                @Override
                public byte[] array() {
                    return all;
                }

                @Override
                public int offset(int part) {
                    return offsets[part];
                }

                @Override
                public int length(int part) {
                    return lengths[part];
                }
            };
        }
    }
}
