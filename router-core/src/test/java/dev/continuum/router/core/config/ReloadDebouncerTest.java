package dev.continuum.router.core.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The debounce state machine on virtual time; the "file" is a string the test rewrites. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class ReloadDebouncerTest {
    private static final Duration QUIET = Duration.ofMillis(500);
    private static final Duration TICK = Duration.ofNanos(1);

    private final ManualScheduler scheduler = new ManualScheduler();
    private final AtomicReference<String> file = new AtomicReference<>("");
    private final AtomicInteger reads = new AtomicInteger();
    private final List<String> applied = new CopyOnWriteArrayList<>();
    private final ReloadDebouncer<String> debouncer = new ReloadDebouncer<>(scheduler, QUIET, () -> {
        reads.incrementAndGet();
        return file.get();
    }, applied::add);

    private void write(String content) {
        file.set(content);
        debouncer.changed();
    }

    @Test
    void appliesOnlyAfterTwoQuietIntervalsThatReadTheSameBytes() {
        write("a");

        scheduler.advance(QUIET.minus(TICK));
        assertThat(reads).hasValue(0);
        scheduler.advance(TICK);
        assertThat(reads).hasValue(1);
        assertThat(applied).isEmpty();
        scheduler.advance(QUIET.minus(TICK));
        assertThat(applied).isEmpty();
        scheduler.advance(TICK);
        assertThat(applied).containsExactly("a");
        assertThat(reads).hasValue(2);
    }

    @Test
    void aWriterThatPausesBetweenTwoPiecesNeverHasItsFirstPieceApplied() {
        write("backends: [a]\n");
        // The writer pauses longer than the quiet interval: a single quiet period would apply piece one here.
        scheduler.advance(QUIET.plus(QUIET.dividedBy(2)));
        assertThat(reads).hasValue(1);
        write("backends: [a]\napi_keys: {mode: blocking}\n");
        scheduler.advance(QUIET.multipliedBy(10));

        assertThat(applied).containsExactly("backends: [a]\napi_keys: {mode: blocking}\n");
    }

    @Test
    void bytesThatChangeWithoutAnEventStartTheConfirmationOver() {
        write("one");
        scheduler.advance(QUIET);
        file.set("two"); // no event: a lost or coalesced notification
        scheduler.advance(QUIET);
        assertThat(applied).isEmpty();

        scheduler.advance(QUIET);
        assertThat(applied).containsExactly("two");
    }

    @Test
    void eachEventRestartsTheQuietInterval() {
        write("a");
        for (int i = 0; i < 5; i++) {
            scheduler.advance(QUIET.minus(TICK));
            write("a");
        }
        assertThat(reads).hasValue(0);

        scheduler.advance(QUIET.multipliedBy(2));
        assertThat(applied).containsExactly("a");
    }

    @Test
    void aBurstOfEventsQueuesOneTaskAndGivesOneReload() {
        for (int i = 0; i < 1000; i++) {
            write("v" + i);
        }
        scheduler.advance(QUIET.multipliedBy(10));

        assertThat(reads).hasValue(2);
        assertThat(applied).containsExactly("v999");
    }

    @Test
    void nothingMoreIsReadOnceApplied() {
        write("a");
        scheduler.advance(QUIET.multipliedBy(2));
        scheduler.advance(QUIET.multipliedBy(20));

        assertThat(reads).hasValue(2);
        assertThat(applied).containsExactly("a");
    }

    @Test
    void anApplyThatThrowsDoesNotStopTheNextReload() {
        AtomicInteger calls = new AtomicInteger();
        ReloadDebouncer<String> failingOnce = new ReloadDebouncer<>(scheduler, QUIET, file::get, s -> {
            if (calls.incrementAndGet() == 1) {
                throw new IllegalStateException("listener failed");
            }
            applied.add(s);
        });
        file.set("a");
        failingOnce.changed();
        scheduler.advance(QUIET.multipliedBy(2));
        file.set("b");
        failingOnce.changed();
        scheduler.advance(QUIET.multipliedBy(2));

        assertThat(calls).hasValue(2);
        assertThat(applied).containsExactly("b");
    }
}
