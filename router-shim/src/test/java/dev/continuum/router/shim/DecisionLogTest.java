package dev.continuum.router.shim;

import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.shim.decisions.DecisionLog;
import dev.continuum.router.shim.decisions.DecisionQuery;
import dev.continuum.router.shim.decisions.DecisionRecord;
import dev.continuum.router.shim.decisions.DecisionSettings;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The ring's count bound, lookups by id, the list filters and paging, and a reload of its size. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class DecisionLogTest {
    private final AtomicReference<DecisionSettings> settings =
            new AtomicReference<>(new DecisionSettings(true, 16, 64 * 1024));
    private final DecisionLog log = new DecisionLog(settings::get, new SimpleMeterRegistry());

    private DecisionRecord add(String model, String result, long worker, long at) {
        long id = log.nextId();
        DecisionRecord r = new DecisionRecord(id, at, model, "dynamo", result, null, "load", "no_prefill_pool",
                worker, 0, -1, -1, new DecisionRecord.PromptStats(10, -1, -1, -1, -1, -1), List.of(), 0, 0, 0,
                null, DecisionRecord.BASE_BYTES);
        log.add(r);
        return r;
    }

    @Test
    void theNewestRecordsAreKeptAndFoundByIdAndFilter() {
        for (int i = 0; i < 40; i++) {
            add(i % 2 == 0 ? "a" : "b", i % 3 == 0 ? "overlap" : "load", i % 4, 1000 + i);
        }
        assertThat(log.get(0)).isNull();
        assertThat(log.get(23)).isNull();
        assertThat(log.get(24)).isNotNull();
        assertThat(log.get(39).id()).isEqualTo(39);
        assertThat(log.get(40)).isNull();
        assertThat(log.get(-1)).isNull();

        List<DecisionRecord> newest = log.query(new DecisionQuery(null, null, null, null, null, Long.MAX_VALUE, 5));
        assertThat(newest).extracting(DecisionRecord::id).containsExactly(39L, 38L, 37L, 36L, 35L);
        List<DecisionRecord> page2 = log.query(new DecisionQuery(null, null, null, null, null, 35, 5));
        assertThat(page2).extracting(DecisionRecord::id).containsExactly(34L, 33L, 32L, 31L, 30L);
        assertThat(log.query(new DecisionQuery("a", null, "overlap", null, null, Long.MAX_VALUE, 50)))
                .extracting(DecisionRecord::id).containsExactly(36L, 30L, 24L);
        assertThat(log.query(new DecisionQuery(null, 3L, null, null, null, Long.MAX_VALUE, 50)))
                .extracting(DecisionRecord::id).containsExactly(39L, 35L, 31L, 27L);
        assertThat(log.query(new DecisionQuery(null, null, null, 1030L, 1033L, Long.MAX_VALUE, 50)))
                .extracting(DecisionRecord::id).containsExactly(32L, 31L, 30L);
        assertThat(log.totals().recorded()).isEqualTo(40);
        assertThat(log.totals().heldBytes()).isEqualTo(16L * DecisionRecord.BASE_BYTES);
    }

    @Test
    void aNewRingSizeStartsAnEmptyRing() {
        add("a", "load", 1, 1);
        settings.set(new DecisionSettings(true, 32, 64 * 1024));
        DecisionRecord r = add("a", "load", 1, 2);
        assertThat(log.get(0)).isNull();
        assertThat(log.get(r.id())).isEqualTo(r);
        assertThat(log.totals().capacity()).isEqualTo(32);
        assertThat(log.totals().heldBytes()).isEqualTo(DecisionRecord.BASE_BYTES);
    }
}
