package dev.continuum.router.load;

import dev.continuum.router.load.wire.ActiveLoad;
import java.util.Objects;

/**
 * The latest {@code ActiveLoad} of one (worker, dp_rank), with where and when it came from.
 *
 * @param key           worker and rank
 * @param load          the decoded sample
 * @param publisherId   the publisher incarnation that sent it (a restart brings a new ID)
 * @param sequence      its envelope sequence (unsigned)
 * @param receivedNanos receipt time on the store's monotonic ticker; ages are measured from it
 */
public record LoadSample(SampleKey key, ActiveLoad load, long publisherId, long sequence, long receivedNanos) {
    public LoadSample {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(load, "load");
    }

    /** Whether the sample reported a backlog (a worker silent since may be stalled: docs/request-path.md). */
    public boolean reportsBacklog() {
        Long decode = load.decodeBlocks();
        Long prefill = load.activePrefillTokens();
        return (decode != null && decode != 0) || (prefill != null && prefill != 0);
    }
}
