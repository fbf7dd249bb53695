package dev.continuum.router.load;

import dev.continuum.router.discovery.DynamoPublisher;
import dev.continuum.router.discovery.PublisherId;
import dev.continuum.router.discovery.PublisherTopic;
import dev.continuum.router.discovery.WorkerId;
import dev.continuum.router.eventplane.zmtp.ZmtpMessage;
import dev.continuum.router.testing.DynamoEventWire;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.List;
import org.jspecify.annotations.Nullable;

/** Upstream-format kv_metrics messages built with msgpack-core's packer (the byte-exact fixtures are hand-written hex). */
public final class Fixtures {
    public static final String NS = "dynamo";
    public static final String TOPIC = "kv_metrics";

    private Fixtures() {
    }

    public static byte[] hex(String text) {
        return HexFormat.of().parseHex(text.replaceAll("[\\s|]", ""));
    }

    public static WorkerId worker(long id) {
        return new WorkerId(NS, id);
    }

    public static DynamoPublisher publisher(long publisherId, String address) {
        return new DynamoPublisher(new PublisherId(NS, publisherId), PublisherTopic.KV_METRICS, "decode", "generate",
                address);
    }

    /** ActiveLoad as upstream's named map: worker_id, dp_rank, active_decode_blocks, active_prefill_tokens, kv_used_blocks. */
    public static byte[] activeLoad(long workerId, long dpRank, @Nullable Long decodeBlocks, @Nullable Long kvUsed) {
        return DynamoEventWire.activeLoad(workerId, dpRank, decodeBlocks, kvUsed);
    }

    public static byte[] envelope(long publisherId, long sequence, String topic, byte[] payload) {
        return DynamoEventWire.envelope(publisherId, sequence, topic, payload);
    }

    public static byte[] u64(long v) {
        return DynamoEventWire.u64(v);
    }

    public static byte[] frame(byte[] envelope) {
        return DynamoEventWire.frame(envelope);
    }

    /** The four parts of one upstream kv_metrics message. */
    public static byte[][] message(long publisherId, long sequence, byte[] activeLoad) {
        return new byte[][] {TOPIC.getBytes(StandardCharsets.US_ASCII), u64(publisherId), u64(sequence),
            frame(envelope(publisherId, sequence, TOPIC, activeLoad))};
    }

    /** A {@link ZmtpMessage} over separate part arrays (copied into one array, as the handler holds them). */
    public static ZmtpMessage zmtp(byte[]... parts) {
        int total = 0;
        for (byte[] part : parts) {
            total += part.length;
        }
        byte[] all = new byte[total + 3]; // a little slack: views must not read past their parts
        int[] ends = new int[parts.length];
        int at = 0;
        for (int i = 0; i < parts.length; i++) {
            System.arraycopy(parts[i], 0, all, at, parts[i].length);
            at += parts[i].length;
            ends[i] = at;
        }
        return new ZmtpMessage() {
            @Override
            public int parts() {
                return parts.length;
            }

            @Override
            public byte[] array() {
                return all;
            }

            @Override
            public int offset(int part) {
                return part == 0 ? 0 : ends[part - 1];
            }

            @Override
            public int length(int part) {
                return ends[part] - offset(part);
            }
        };
    }

    /** The ranks every fixture worker declares: enough for the tests' multi-rank samples (0 to 7). */
    public static final DpRanks FIXTURE_RANKS = new DpRanks(0, 8);

    public static LoadTargets targets(long generation, List<DynamoPublisher> publishers, WorkerId... live) {
        return new LoadTargets(generation, publishers, live(live));
    }

    /** {@code workers} as a live set, each declaring {@link #FIXTURE_RANKS}. */
    public static java.util.Map<WorkerId, DpRanks> live(WorkerId... workers) {
        java.util.Map<WorkerId, DpRanks> live = new java.util.HashMap<>();
        for (WorkerId worker : workers) {
            live.put(worker, FIXTURE_RANKS);
        }
        return live;
    }
}
