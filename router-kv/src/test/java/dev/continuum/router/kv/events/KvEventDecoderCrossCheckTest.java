package dev.continuum.router.kv.events;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The decoder against an independent encoder: Debian's python3-msgpack lays out RouterEvents the way
 * upstream's serializer does (ai-dynamo/dynamo lib/kv-router/src/protocols.rs at commit
 * 038eab23a6b6e9b6391de6640f4f69d4c2726681: RouterEvent {worker_id, storage_tier, residency_domain (omitted
 * when missing), event, state_source (omitted when None)}, KvCacheEvent {event_id, data, dp_rank},
 * KvCacheEventData as a one-entry map {"stored"|"removed": ...} or the string "cleared", KvCacheStoreData
 * {parent_hash, start_position, blocks}, KvCacheStoredBlockData {block_hash, tokens_hash, mm_extra_info};
 * rmp_serde::to_vec_named writes structs as string-keyed maps in declaration order and the smallest integer
 * formats, as msgpack.packb does). Random events, with values above 2^63, every variant and the newer
 * optional fields, are encoded by Python and must decode to exactly what was asked for, one per payload and
 * all together as one batch.
 */
class KvEventDecoderCrossCheckTest {
    private static final String SCRIPT = """
            import json, sys, msgpack
            def encode(e):
                if e["kind"] == "cleared":
                    data = "cleared"
                elif e["kind"] == "removed":
                    data = {"removed": {"block_hashes": e["hashes"]}}
                else:
                    blocks = []
                    for b in e["blocks"]:
                        mm = None
                        if b[2]:
                            mm = {"mm_objects": [{"mm_hash": b[1], "offsets": [[0, 3], [5, 7]]}]}
                        blocks.append({"block_hash": b[0], "tokens_hash": b[1], "mm_extra_info": mm})
                    data = {"stored": {"parent_hash": e["parent"], "start_position": e["start"], "blocks": blocks}}
                event = {"event_id": e["id"], "data": data, "dp_rank": e["dp"]}
                if e["newer"]:
                    event["a_newer_field"] = {"x": [1, 2.5, "y", None, True]}
                r = {"worker_id": e["worker"], "storage_tier": e["tier"]}
                if e["domain"] is not None:
                    r["residency_domain"] = e["domain"]
                r["event"] = event
                if e["newer"]:
                    r["state_source"] = {"pool": "p", "slot": [1, 2, 3]}
                return r
            events = [json.loads(line) for line in sys.stdin if line.strip()]
            for e in events:
                print(msgpack.packb(encode(e), use_bin_type=True).hex())
            print(msgpack.packb([encode(e) for e in events], use_bin_type=True).hex())
            """;
    private static final String[] TIERS = {"device", "device", "device", "host_pinned", "disk", "external"};

    record Block(long blockHash, long tokensHash, boolean mm) {
    }

    record Event(long worker, String tier, String domain, long id, long dp, KvEvents.Kind kind, Long parent,
                 Integer start, List<Block> blocks, List<Long> hashes, boolean newer) {
        boolean indexable() {
            return tier.equals("device") && (domain == null || domain.equals("worker"));
        }

        String json() {
            StringBuilder b = new StringBuilder("{");
            b.append("\"worker\":").append(Long.toUnsignedString(worker));
            b.append(",\"tier\":\"").append(tier).append('"');
            b.append(",\"domain\":").append(domain == null ? "null" : '"' + domain + '"');
            b.append(",\"id\":").append(Long.toUnsignedString(id));
            b.append(",\"dp\":").append(dp);
            b.append(",\"kind\":\"").append(kind.name().toLowerCase(java.util.Locale.ROOT)).append('"');
            b.append(",\"parent\":").append(parent == null ? "null" : Long.toUnsignedString(parent));
            b.append(",\"start\":").append(start == null ? "null" : start.toString());
            b.append(",\"blocks\":[");
            for (int i = 0; i < blocks.size(); i++) {
                Block k = blocks.get(i);
                b.append(i == 0 ? "" : ",").append('[').append(Long.toUnsignedString(k.blockHash)).append(',')
                        .append(Long.toUnsignedString(k.tokensHash)).append(',').append(k.mm ? "true" : "false")
                        .append(']');
            }
            b.append("],\"hashes\":[");
            for (int i = 0; i < hashes.size(); i++) {
                b.append(i == 0 ? "" : ",").append(Long.toUnsignedString(hashes.get(i)));
            }
            return b.append("],\"newer\":").append(newer).append('}').toString();
        }
    }

    @Test
    void decodesExactlyWhatPythonEncodedInUpstreamsLayout() throws Exception {
        SplittableRandom random = new SplittableRandom(20261203);
        List<Event> events = new ArrayList<>();
        for (int i = 0; i < 120; i++) {
            events.add(randomEvent(random));
        }
        StringBuilder input = new StringBuilder();
        events.forEach(e -> input.append(e.json()).append('\n'));
        List<String> lines = python(input.toString());
        assertThat(lines).hasSize(events.size() + 1);

        KvEventDecoder decoder = new KvEventDecoder();
        KvEvents decoded = new KvEvents();
        for (int i = 0; i < events.size(); i++) {
            byte[] payload = HexFormat.of().parseHex(lines.get(i));
            decoder.decode(payload, 0, payload.length, decoded);
            assertThat(decoded.malformed()).as("event %d", i).isZero();
            assertThat(decoded.size()).isEqualTo(1);
            assertSame(events.get(i), decoded, 0);
        }
        byte[] batch = HexFormat.of().parseHex(lines.get(events.size()));
        decoder.decode(batch, 0, batch.length, decoded);
        assertThat(decoded.malformed()).isZero();
        assertThat(decoded.size()).isEqualTo(events.size());
        for (int i = 0; i < events.size(); i++) {
            assertSame(events.get(i), decoded, i);
        }
    }

    private static void assertSame(Event e, KvEvents d, int i) {
        assertThat(d.workerId(i)).isEqualTo(e.worker);
        assertThat(d.eventId(i)).isEqualTo(e.id);
        assertThat(d.dpRank(i)).isEqualTo(e.dp);
        assertThat(d.kind(i)).isEqualTo(e.kind);
        assertThat(d.indexable(i)).isEqualTo(e.indexable());
        switch (e.kind) {
            case STORED -> {
                assertThat(d.hasParent(i)).isEqualTo(e.parent != null);
                if (e.parent != null) {
                    assertThat(d.parentHash(i)).isEqualTo(e.parent.longValue());
                }
                assertThat(d.blockCount(i)).isEqualTo(e.blocks.size());
                for (int b = 0; b < e.blocks.size(); b++) {
                    assertThat(d.blockHashes()[d.blockFrom(i) + b]).isEqualTo(e.blocks.get(b).blockHash);
                    assertThat(d.tokensHashes()[d.blockFrom(i) + b]).isEqualTo(e.blocks.get(b).tokensHash);
                }
            }
            case REMOVED -> {
                assertThat(d.blockCount(i)).isEqualTo(e.hashes.size());
                for (int b = 0; b < e.hashes.size(); b++) {
                    assertThat(d.blockHashes()[d.blockFrom(i) + b]).isEqualTo(e.hashes.get(b).longValue());
                }
            }
            case CLEARED -> assertThat(d.blockCount(i)).isZero();
        }
    }

    private static Event randomEvent(SplittableRandom r) {
        KvEvents.Kind kind = KvEvents.Kind.values()[r.nextInt(3)];
        List<Block> blocks = new ArrayList<>();
        List<Long> hashes = new ArrayList<>();
        int n = r.nextInt(0, 40);
        if (kind == KvEvents.Kind.STORED) {
            for (int i = 0; i < n; i++) {
                blocks.add(new Block(u64(r), u64(r), r.nextInt(8) == 0));
            }
        } else if (kind == KvEvents.Kind.REMOVED) {
            for (int i = 0; i < n; i++) {
                hashes.add(u64(r));
            }
        }
        String[] domains = {null, null, "worker", "cache_owner"};
        return new Event(u64(r), TIERS[r.nextInt(TIERS.length)], domains[r.nextInt(domains.length)], u64(r),
                r.nextInt(3) == 0 ? r.nextLong(0, 0x1_0000_0000L) : r.nextInt(8), kind,
                r.nextBoolean() ? null : u64(r), r.nextBoolean() ? null : r.nextInt(100_000), blocks, hashes,
                r.nextInt(4) == 0);
    }

    /** Small, medium and full-width values, so every msgpack integer format appears. */
    private static long u64(SplittableRandom r) {
        return switch (r.nextInt(4)) {
            case 0 -> r.nextInt(128);
            case 1 -> r.nextLong(0, 1L << 32);
            default -> r.nextLong();
        };
    }

    private static List<String> python(String stdin) throws IOException, InterruptedException {
        Process p = new ProcessBuilder("/usr/bin/python3", "-c", SCRIPT).redirectErrorStream(true).start();
        p.getOutputStream().write(stdin.getBytes(StandardCharsets.US_ASCII));
        p.getOutputStream().close();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.US_ASCII).trim();
        assertThat(p.waitFor()).as(out).isZero();
        return out.lines().toList();
    }
}
