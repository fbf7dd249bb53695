package dev.continuum.router.sim;

import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;

/**
 * The simulator's own count of avoidable prefill tokens, request by request: for each served prompt, what another
 * rank's cache held beyond the serving rank's when it was served (any rank, and only ranks with no more prefill
 * work queued). Requests that carry the router's {@code x-continuum-decision-id} are kept by that id (at most
 * {@link #MAX_PAIRED}; later ones are counted with the unpaired), so a harness can pair each with the router's
 * record; the others are summed.
 */
public final class AvoidableTokens {
    /** Bounds the per-request map: a long replay beyond it still counts, in the unpaired sums. */
    public static final int MAX_PAIRED = 1 << 20;

    /**
     * One served request's figures, in prompt tokens.
     *
     * @param anyRank   the longest prefix another rank held, less what the serving rank held (0 when none held more)
     * @param notBusier the same over ranks with no more prefill work queued than the serving rank
     * @param cached    what the serving rank held
     * @param prompt    the prompt's tokens
     */
    public record Served(long anyRank, long notBusier, long cached, long prompt) {
    }

    /** Sums over requests: how many, and their figures. */
    public record Sum(long requests, long anyRank, long notBusier) {
    }

    private final Map<Long, Served> byDecision = new ConcurrentHashMap<>();
    private final AtomicLong anyRank = new AtomicLong();
    private final AtomicLong notBusier = new AtomicLong();
    private final AtomicLong unpairedRequests = new AtomicLong();
    private final AtomicLong unpairedAnyRank = new AtomicLong();
    private final AtomicLong unpairedNotBusier = new AtomicLong();

    /** Counts one served request; {@code decisionId} is -1 when it carried none (or an unreadable one). */
    void served(long decisionId, Served s) {
        anyRank.addAndGet(s.anyRank());
        notBusier.addAndGet(s.notBusier());
        if (decisionId >= 0 && byDecision.size() < MAX_PAIRED && byDecision.putIfAbsent(decisionId, s) == null) {
            return;
        }
        unpairedRequests.incrementAndGet();
        unpairedAnyRank.addAndGet(s.anyRank());
        unpairedNotBusier.addAndGet(s.notBusier());
    }

    /** Every request's tokens another rank held (any rank), summed. */
    public long anyRankTotal() {
        return anyRank.get();
    }

    /** Every request's tokens a rank no busier held, summed. */
    public long notBusierTotal() {
        return notBusier.get();
    }

    /** The request that carried decision id {@code id}, when it was served here. */
    public Optional<Served> forDecision(long id) {
        return Optional.ofNullable(byDecision.get(id));
    }

    /** Every request kept by decision id, as now (a copy). */
    public Map<Long, Served> byDecision() {
        return Map.copyOf(byDecision);
    }

    /** The requests that carried no decision id (or a repeated one, or came past {@link #MAX_PAIRED}). */
    public Sum unpaired() {
        return new Sum(unpairedRequests.get(), unpairedAnyRank.get(), unpairedNotBusier.get());
    }

    /**
     * The router's decision id from a request header: a decimal sequence number of at most 19 digits, else -1
     * (absent, or not one the router sends: such a request is counted with the unpaired).
     */
    static long parseDecisionId(@Nullable CharSequence header) {
        if (header == null || header.length() == 0 || header.length() > 19) {
            return -1;
        }
        long v = 0;
        for (int i = 0; i < header.length(); i++) {
            char c = header.charAt(i);
            if (c < '0' || c > '9') {
                return -1;
            }
            v = v * 10 + (c - '0');
        }
        return v < 0 ? -1 : v;
    }
}
