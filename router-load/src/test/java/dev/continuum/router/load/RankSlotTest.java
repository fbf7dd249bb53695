package dev.continuum.router.load;

import static dev.continuum.router.load.Fixtures.worker;
import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.load.wire.ActiveLoad;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The load store's per-rank slots: what a picker's candidate index reads instead of looking keys up. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RankSlotTest {
    private final ManualTicker ticker = new ManualTicker();
    private final ConcurrentLoadStore store = new ConcurrentLoadStore(ticker, 16);
    private final RankSlot.Reading reading = new RankSlot.Reading();

    private static ActiveLoad load(long worker, long rank, long decode, long prefill) {
        return new ActiveLoad(worker, rank, decode, prefill, null, null);
    }

    private static SampleKey key(int worker, long rank) {
        return new SampleKey(worker(worker), rank);
    }

    @Test
    void aSlotTakenBeforeAnySampleShowsTheSamplesThatArriveLater() {
        store.setLiveAndRetain(Fixtures.live(worker(1)));
        RankSlot slot = store.slot(key(1, 0));
        assertThat(slot.read(reading)).isTrue();
        assertThat(reading.held()).isFalse();

        store.apply("dynamo", 9, 1, load(1, 0, 40, 7));
        assertThat(slot.read(reading)).isTrue();
        assertThat(reading.held()).isTrue();
        assertThat(reading.decodeBlocks()).isEqualTo(40);
        assertThat(reading.prefillTokens()).isEqualTo(7);
        assertThat(reading.receivedNanos()).isEqualTo(ticker.getAsLong());
        assertThat(reading.reportsBacklog()).isTrue();
        assertThat(slot.sample()).isSameAs(store.latest(key(1, 0)));
        assertThat(store.slot(key(1, 0))).isSameAs(slot);
    }

    @Test
    void aSlotTakenAfterASampleStartsWithItAndShowsAbsentFieldsAsAbsent() {
        store.setLiveAndRetain(Fixtures.live(worker(1)));
        store.apply("dynamo", 9, 1, new ActiveLoad(1, 0, null, null, null, 12L));
        RankSlot slot = store.slot(key(1, 0));

        assertThat(slot.read(reading)).isTrue();
        assertThat(reading.held()).isTrue();
        assertThat(reading.decodeBlocks()).isEqualTo(12); // kv_used_blocks stands in for active_decode_blocks
        assertThat(reading.prefillTokens()).isEqualTo(RankSlot.ABSENT);
    }

    @Test
    void aSampleTheStoreDropsLeavesTheSlotEmpty() {
        store.setLiveAndRetain(Fixtures.live(worker(1)));
        RankSlot slot = store.slot(key(1, 0));
        store.apply("dynamo", 9, 1, load(1, 0, 40, 7));

        store.dropPublisher(List.of(key(1, 0)), 9);

        assertThat(slot.read(reading)).isTrue();
        assertThat(reading.held()).isFalse();
        assertThat(slot.sample()).isNull();
    }

    @Test
    void aDepartedWorkersSlotIsDetachedAndItsReturnGetsAFreshSlotThatNeverShowedTheOldSample() {
        store.setLiveAndRetain(Fixtures.live(worker(1), worker(2)));
        RankSlot old = store.slot(key(1, 0));
        RankSlot stays = store.slot(key(2, 0));
        store.apply("dynamo", 9, 1, load(1, 0, 40, 7));

        store.setLiveAndRetain(Fixtures.live(worker(2)));
        assertThat(old.detached()).isTrue();
        assertThat(old.read(reading)).isFalse(); // its holder asks the store by key
        assertThat(stays.detached()).isFalse();
        assertThat(store.detachedSlots()).isEqualTo(1);
        assertThat(store.slots()).isEqualTo(1);

        // The same instance ID registers again: a new slot, empty until the new incarnation publishes.
        store.setLiveAndRetain(Fixtures.live(worker(1), worker(2)));
        RankSlot fresh = store.slot(key(1, 0));
        assertThat(fresh).isNotSameAs(old);
        assertThat(fresh.read(reading)).isTrue();
        assertThat(reading.held()).isFalse();
        store.apply("dynamo", 10, 1, load(1, 0, 3, 0));
        assertThat(fresh.read(reading)).isTrue();
        assertThat(reading.decodeBlocks()).isEqualTo(3);
        assertThat(old.sample()).isNull();
        assertThat(old.read(reading)).isFalse();
    }

    @Test
    void aSlotTakenForAKeyTheLiveSetDoesNotHoldYetIsKeptWhenTheLiveSetAdmitsIt() {
        store.setLiveAndRetain(Fixtures.live(worker(1)));
        RankSlot ahead = store.slot(key(2, 0)); // an index built for a newer registry generation than the store's

        store.setLiveAndRetain(Fixtures.live(worker(1), worker(2)));
        store.apply("dynamo", 9, 1, load(2, 0, 5, 0));

        assertThat(ahead.detached()).isFalse();
        assertThat(ahead.read(reading)).isTrue();
        assertThat(reading.decodeBlocks()).isEqualTo(5);
    }

    @Test
    void slotsOfKeysTheLiveSetDoesNotAdmitAreDroppedAtTheNextLiveSetChange() {
        store.setLiveAndRetain(Fixtures.live(worker(1)));
        store.slot(key(1, 0));
        RankSlot undeclared = store.slot(key(1, 8)); // a rank the card does not declare (it declares 0 to 7)
        RankSlot unknown = store.slot(key(7, 0));
        assertThat(store.slots()).isEqualTo(3);

        store.setLiveAndRetain(Fixtures.live(worker(1)));

        assertThat(store.slots()).isEqualTo(1);
        assertThat(undeclared.detached()).isTrue();
        assertThat(unknown.detached()).isTrue();
        assertThat(store.apply("dynamo", 9, 1, load(1, 8, 5, 5))).isEqualTo(LoadEventResult.IDENTITY_MISMATCH);
        assertThat(undeclared.sample()).isNull();
    }

    @Test
    void aReaderRacingTheWriterAlwaysSeesOneWholeSample() throws Exception {
        AtomicLong clock = new AtomicLong();
        ConcurrentLoadStore store = new ConcurrentLoadStore(clock::get, 16);
        store.setLiveAndRetain(Fixtures.live(worker(1)));
        RankSlot slot = store.slot(key(1, 0));
        AtomicBoolean done = new AtomicBoolean();
        AtomicLong written = new AtomicLong();
        Thread writer = new Thread(() -> {
            // Each sample carries decode = n and prefill = 2n, received at n: a torn read breaks the relation.
            for (long n = 1; n <= 200_000; n++) {
                clock.set(n);
                store.apply("dynamo", 9, n, load(1, 0, n, 2 * n));
                written.set(n);
            }
            done.set(true);
        });
        writer.start();
        long reads = 0;
        long last = 0;
        while (!done.get() || reads == 0) {
            assertThat(slot.read(reading)).isTrue();
            if (reading.held()) {
                long n = reading.decodeBlocks();
                assertThat(reading.prefillTokens()).isEqualTo(2 * n);
                assertThat(reading.receivedNanos()).isEqualTo(n);
                assertThat(n).isGreaterThanOrEqualTo(last); // one writer: never older than what was seen
                last = n;
            }
            reads++;
        }
        writer.join();
        assertThat(slot.read(reading)).isTrue();
        assertThat(reading.decodeBlocks()).isEqualTo(written.get());
    }
}
