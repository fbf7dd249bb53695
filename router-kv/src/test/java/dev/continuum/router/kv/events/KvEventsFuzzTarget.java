package dev.continuum.router.kv.events;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;

/**
 * Coverage-guided fuzzing of the kv-events decoder (docs/testing.md, "Fuzzing"): the fuzzer's bytes are one
 * kv-events payload. Beyond "no crash", every input ends as decoded events plus counted drops (the decoder
 * never throws), within the message bounds, with every decoded field inside its wire type: a dp_rank within
 * u32, block ranges inside the message's blocks, and no blocks on a cleared event.
 */
class KvEventsFuzzTarget {
    private final KvEventDecoder decoder = new KvEventDecoder();
    private final KvEvents events = new KvEvents();

    @FuzzTest(maxDuration = "10s")
    void everyInputEndsAsEventsAndCountedDrops(byte[] input) {
        decoder.decode(input, 0, input.length, events);
        assertThat(events.size()).isBetween(0, KvEvents.MAX_EVENTS);
        assertThat(events.malformed()).isNotNegative();
        if (input.length > 0) {
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
