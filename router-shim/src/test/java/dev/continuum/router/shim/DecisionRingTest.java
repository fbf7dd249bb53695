package dev.continuum.router.shim;

import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.shim.decisions.DecisionLog;
import dev.continuum.router.shim.decisions.DecisionQuery;
import dev.continuum.router.shim.decisions.DecisionRecord;
import dev.continuum.router.shim.decisions.DecisionSettings;
import dev.continuum.router.shim.decisions.PhaseTerms;
import dev.continuum.router.shim.decisions.RankTerms;
import dev.continuum.router.shim.decisions.RecordSlot;
import dev.continuum.router.shim.decisions.TtftModel;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The ring's reused slots: a record drafted in place reads back as it was drafted, readers racing writers on a
 * small ring never see a record mixed from two, and a first-bytes report for a record that left the ring teaches
 * nothing and marks nothing.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class DecisionRingTest {
    private static final DecisionQuery NEWEST = new DecisionQuery(null, null, null, null, null, Long.MAX_VALUE, 16);
    private final AtomicLong clock = new AtomicLong(1_000_000_000L);
    private final DecisionLog log = new DecisionLog(() -> new DecisionSettings(true, 16, 64 * 1024),
            new SimpleMeterRegistry(), clock::get);

    /** Drafts record {@code id}: every field that can carry it carries {@code id}, with {@code n} candidates a phase. */
    private static void draft(RecordSlot d, long id, int n) {
        d.start(id, id, "model-" + (id % 3), "ns", id % 2 == 0 ? "load" : "overlap", null, "load", "load", id,
                (int) (id % 7), id + 1, 0);
        d.prompt(id, (int) (id % 1000), id % 50, 16);
        for (int p = 0; p < 2; p++) {
            d.phase(p == 0 ? "decode_load" : "prefill_load", n, 100 + p, n - 1, Double.NaN);
            for (int j = 0; j < n; j++) {
                d.put(j, id, j, id + j, id, id, id, j, 16, j, id, id, j % 4, id + 0.5 * j, j % 2 == 0);
            }
        }
        d.quality((int) (id % 100), (int) (id % 100) + 1, id);
    }

    /** Whether {@code r} is record {@code id} exactly as {@link #draft} made it. */
    private static boolean whole(DecisionRecord r, long id) {
        if (r.id() != id || r.epochMillis() != id || r.decodeWorker() != id || r.prefillWorker() != id + 1
                || r.prompt().estimatedTokens() != id || r.avoidableTokens() != id || r.phases().size() != 2) {
            return false;
        }
        for (PhaseTerms p : r.phases()) {
            for (int j = 0; j < p.candidates().size(); j++) {
                RankTerms t = p.candidates().get(j);
                if (t.workerId() != id || t.sampleBacklog() != id + j || t.adjustedPrefill() != id
                        || t.cost() != id + 0.5 * j) {
                    return false;
                }
            }
        }
        return true;
    }

    @Test
    void aDraftReadsBackAsDraftedAndALargerRecordGrowsItsSlot() {
        RecordSlot d = new RecordSlot();
        draft(d, log.nextId(), 3);
        log.add(d);
        DecisionRecord small = log.get(0);
        assertThat(small).isNotNull();
        assertThat(whole(small, 0)).isTrue();
        assertThat(small.phases().get(1).candidates()).hasSize(3);
        assertThat(small.phases().get(1).omitted()).isEqualTo(101);
        assertThat(small.phases().get(1).winning().dpRank()).isEqualTo(2);
        assertThat(small.phases().get(0).candidates().get(1).state()).isEqualTo("quiet");
        assertThat(small.estimatedBytes()).isEqualTo(DecisionRecord.BASE_BYTES + 6 * RankTerms.ESTIMATED_BYTES);
        for (long id = 1; id <= 16; id++) { // id 16 reuses record 0's slot with more candidates
            draft(d, log.nextId(), id == 16 ? 9 : 3);
            log.add(d);
        }
        assertThat(log.get(0)).isNull();
        DecisionRecord large = log.get(16);
        assertThat(large).isNotNull();
        assertThat(whole(large, 16)).isTrue();
        assertThat(large.phases().get(0).candidates()).hasSize(9);
        assertThat(log.totals().heldBytes())
                .isEqualTo(16L * DecisionRecord.BASE_BYTES + (15 * 6 + 18) * RankTerms.ESTIMATED_BYTES);
    }

    /**
     * Two writers (filling slots in place and copying drafts in) and two readers on a 16-record ring: every record a
     * reader gets is one writer's whole record, never fields of two; the readers do get records (the test would pass vacuously otherwise).
     */
    @Test
    void readersRacingWritersNeverSeeAMixedRecord() throws Exception {
        int perWriter = 100_000;
        AtomicReference<Throwable> failure = new AtomicReference<>();
        AtomicLong read = new AtomicLong();
        AtomicLong mixed = new AtomicLong();
        List<Thread> threads = new ArrayList<>();
        AtomicLong writersLeft = new AtomicLong(2);
        for (int w = 0; w < 2; w++) {
            threads.add(new Thread(() -> {
                RecordSlot d = new RecordSlot();
                for (int i = 0; i < perWriter; i++) {
                    long id = log.nextId();
                    if (i % 2 == 0) { // written in place, as the recorder does
                        RecordSlot slot = log.claim(id);
                        if (slot != null) {
                            draft(slot, id, 1 + i % 9);
                            log.keep(slot, true);
                        }
                    } else { // drafted apart and copied in
                        draft(d, id, 1 + i % 9);
                        log.add(d);
                    }
                }
                writersLeft.decrementAndGet();
            }));
        }
        for (int r = 0; r < 2; r++) {
            threads.add(new Thread(() -> {
                while (writersLeft.get() > 0) {
                    for (DecisionRecord rec : log.query(NEWEST)) { // each one read through get(id)
                        read.incrementAndGet();
                        if (!whole(rec, rec.id())) {
                            mixed.incrementAndGet();
                        }
                    }
                }
            }));
        }
        threads.forEach(t -> t.setUncaughtExceptionHandler((th, e) -> failure.set(e)));
        threads.forEach(Thread::start);
        for (Thread t : threads) {
            t.join();
        }
        assertThat(failure.get()).isNull();
        assertThat(mixed.get()).isZero();
        assertThat(read.get()).isPositive();
        // Every id was drafted once; a draft is dropped only when its slot was taken by a writer at that moment.
        assertThat(log.totals().recorded()).isLessThanOrEqualTo(2L * perWriter).isGreaterThan(perWriter);
    }

    @Test
    void aSlotWhoseFillDidNotCompleteIsPublishedEmpty() {
        RecordSlot d = new RecordSlot();
        for (int i = 0; i < 16; i++) {
            draft(d, log.nextId(), 1);
            log.add(d);
        }
        long id = log.nextId(); // 16: record 0's slot
        RecordSlot slot = log.claim(id);
        assertThat(slot).isNotNull();
        assertThat(log.get(0)).isNull(); // claimed: its old record reads as gone
        assertThat(log.claim(id)).isNull(); // a second writer of the slot does not wait
        draft(slot, id, 1);
        log.keep(slot, false);
        assertThat(log.get(id)).isNull();
        assertThat(log.totals().recorded()).isEqualTo(16);
        assertThat(log.totals().heldBytes()).isEqualTo(15L * (DecisionRecord.BASE_BYTES + 2 * RankTerms.ESTIMATED_BYTES));
        draft(d, log.nextId(), 1); // 17, in record 1's slot
        log.add(d);
        assertThat(log.claim(1)).isNull(); // an older record never replaces a newer one
        assertThat(log.get(17)).isNotNull();
    }

    @Test
    void firstBytesOfARecordThatLeftTheRingTeachNothing() {
        RecordSlot d = new RecordSlot();
        draft(d, log.nextId(), 1);
        log.predict(d, 7, 0, 1_000);
        log.add(d);
        clock.addAndGet(TimeUnit.MILLISECONDS.toNanos(50));
        for (int i = 0; i < 16; i++) { // the ring goes round: record 0's slot holds record 16
            draft(d, log.nextId(), 1);
            log.predict(d, 7, 0, 1_000);
            log.add(d);
        }
        log.firstBytes(0);
        assertThat(log.ttftModel().rate(7, 0)).isNaN();
        DecisionRecord r = log.get(16);
        assertThat(r).isNotNull();
        assertThat(r.ttft()).isNotNull();
        assertThat(r.ttft().observedNanos()).isEqualTo(-1);

        log.firstBytes(16);
        log.firstBytes(16); // once only
        r = log.get(16);
        assertThat(r.ttft().observedNanos()).isZero(); // drafted at the clock's present: no time went by
        assertThat(r.ttft().basis()).isEqualTo(TtftModel.Basis.NONE);
        clock.addAndGet(TimeUnit.MILLISECONDS.toNanos(10));
        log.firstBytes(15);
        assertThat(log.get(15).ttft().observedNanos()).isEqualTo(TimeUnit.MILLISECONDS.toNanos(10));
        assertThat(log.ttftModel().rate(7, 0)).isPositive();
    }
}
