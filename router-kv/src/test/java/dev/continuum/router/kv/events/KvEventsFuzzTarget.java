package dev.continuum.router.kv.events;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;

/**
 * Coverage-guided fuzzing of the kv-events decoder (docs/testing.md, "Fuzzing"): the fuzzer's bytes are one
 * kv-events payload. Beyond "no crash", every input ends as decoded events plus counted drops (the decoder
 * never throws; only an empty batch counts nothing), within the message bounds, with every decoded field
 * inside its wire type: a dp_rank within u32, block ranges inside the message's blocks, and no blocks on a
 * cleared event. The kept crash input (an empty batch) was a finding against an earlier version of this
 * contract, not against the decoder.
 */
class KvEventsFuzzTarget {
    private final KvEventDecoder decoder = new KvEventDecoder();
    private final KvEvents events = new KvEvents();

    /** An empty array (fixarray, array 16 or array 32 of length 0): a batch of no events, nothing to count. */
    private static boolean emptyBatch(byte[] input) {
        return (input.length == 1 && input[0] == (byte) 0x90)
                || (input.length == 3 && input[0] == (byte) 0xDC && input[1] == 0 && input[2] == 0)
                || (input.length == 5 && input[0] == (byte) 0xDD && input[1] == 0 && input[2] == 0 && input[3] == 0
                        && input[4] == 0);
    }

    @FuzzTest(maxDuration = "10s")
    void everyInputEndsAsEventsAndCountedDrops(byte[] input) {
        decoder.decode(input, 0, input.length, events);
        assertThat(events.size()).isBetween(0, KvEvents.MAX_EVENTS);
        assertThat(events.malformed()).isNotNegative();
        if (input.length > 0 && !emptyBatch(input)) {
            assertThat(events.size() + events.malformed()).as("every input counts").isPositive();
        }
        int end = 0;
        for (int i = 0; i < events.size(); i++) {
            assertThat(events.dpRank(i)).isBetween(0L, 0xFFFF_FFFFL);
            assertThat(events.blockFrom(i)).isGreaterThanOrEqualTo(end);
            end = events.blockFrom(i) + events.blockCount(i);
            assertThat(end).isLessThanOrEqualTo(KvEvents.MAX_BLOCKS);
            if (events.kind(i) == KvEvents.Kind.CLEARED) {
                assertThat(events.blockCount(i)).isZero();
            }
        }
    }
}
