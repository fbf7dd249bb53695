package dev.continuum.router.proxy;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * How one request is dispatched on a hook's path, and how the proxy treats its failures:
 * <ul>
 *   <li>Connect failures and 502/503 answers retry on another of {@link #backends} with the same
 *       {@link #upstreamHeaders}, within {@code retry.max_attempts} and the retry budget; the plan is never
 *       re-made for the same request.</li>
 *   <li>A non-2xx answer whose body (first {@link #MAX_INSPECTED_ERROR_BYTES}) contains {@link #refusalMarker}
 *       becomes 503 with code {@link #refusalCode}, without retry or fallback ({@link Outcome#REFUSED}).</li>
 *   <li>Any other failure before the response head reaches the client (transport failure, timeout, non-2xx)
 *       falls back to standard routing among the request's other candidates, without the plan's headers, when
 *       {@code disaggregated_serving.fallback_to_unified} is true ({@link Outcome#FELL_BACK}); else the client
 *       gets 502 {@code disaggregated_decode_failed} ({@link Outcome#FAILED}). On a stream, only transport
 *       failures, 5xx, 429 and 408 fall back; another 4xx is relayed as the upstream sent it.</li>
 * </ul>
 *
 * <p>Response headers: {@code x-continuum-routing-path} is {@link #routingPath} ({@code fallback} after a
 * fallback); when the client sent {@code x-backend} (even blank), {@code x-continuum-backend} and
 * {@link #disclosedHeaders} are added too. {@code x-continuum-decision-id} is {@link #decisionId} when the plan
 * has one (even after a fallback: the record says where the router wanted the request to go). The same header goes
 * upstream with every attempt on the plan's path (not after a fallback), so a worker can pair what it served with
 * the record; a client's own {@code x-continuum-decision-id} is dropped at ingress ({@link UntrustedHeaders}).
 *
 * @param backends         the backends this plan may use (a subset of the request's usable backends)
 * @param upstreamHeaders  headers added to every attempt on the plan's path
 * @param disclosedHeaders identities shown to a client that sent {@code x-backend}
 * @param routingPath      the {@code x-continuum-routing-path} value on the plan's path
 * @param refusalMarker    text that marks an upstream refusal of the plan itself
 * @param refusalCode      the error code answered for such a refusal
 * @param listener         told once how the plan ended
 * @param pinnedBody       the body sent on the plan's path, or null for the request's own
 * @param decisionId       the id of the plan's decision record, or null when none was kept
 */
public record DispatchPlan(
        List<String> backends,
        Map<String, String> upstreamHeaders,
        Map<String, String> disclosedHeaders,
        String routingPath,
        String refusalMarker,
        String refusalCode,
        Listener listener,
        @Nullable PinnedBody pinnedBody,
        @Nullable String decisionId) implements DispatchHook.Answer {

    /** A plan that sends the request's own body on its path. */
    public DispatchPlan(List<String> backends, Map<String, String> upstreamHeaders,
            Map<String, String> disclosedHeaders, String routingPath, String refusalMarker, String refusalCode,
            Listener listener) {
        this(backends, upstreamHeaders, disclosedHeaders, routingPath, refusalMarker, refusalCode, listener, null);
    }

    /** A plan without a decision record. */
    public DispatchPlan(List<String> backends, Map<String, String> upstreamHeaders,
            Map<String, String> disclosedHeaders, String routingPath, String refusalMarker, String refusalCode,
            Listener listener, @Nullable PinnedBody pinnedBody) {
        this(backends, upstreamHeaders, disclosedHeaders, routingPath, refusalMarker, refusalCode, listener,
                pinnedBody, null);
    }

    /** How much of an error body is read to look for the refusal marker; the rest is discarded. */
    public static final int MAX_INSPECTED_ERROR_BYTES = 64 * 1024;

    public DispatchPlan {
        backends = List.copyOf(backends);
        upstreamHeaders = Map.copyOf(upstreamHeaders);
        disclosedHeaders = Map.copyOf(disclosedHeaders);
        Objects.requireNonNull(routingPath, "routingPath");
        Objects.requireNonNull(refusalMarker, "refusalMarker");
        Objects.requireNonNull(refusalCode, "refusalCode");
        Objects.requireNonNull(listener, "listener");
    }

    /**
     * The body every attempt on the plan's path sends instead of the request's (for example the request's body with
     * {@code nvext.token_data} added); a fallback to standard routing sends the request's own body again.
     *
     * @param bytes the complete JSON body; never modified after the plan is made
     */
    public record PinnedBody(byte[] bytes) {
        public PinnedBody {
            Objects.requireNonNull(bytes, "bytes");
        }
    }

    /** This plan with {@code body} sent on its path. */
    public DispatchPlan withPinnedBody(byte[] body) {
        return new DispatchPlan(backends, upstreamHeaders, disclosedHeaders, routingPath, refusalMarker, refusalCode,
                listener, new PinnedBody(body), decisionId);
    }

    /** This plan with the id of its decision record. */
    public DispatchPlan withDecisionId(String id) {
        return new DispatchPlan(backends, upstreamHeaders, disclosedHeaders, routingPath, refusalMarker, refusalCode,
                listener, pinnedBody, id);
    }

    /** How a plan ended. */
    public enum Outcome {
        /** A response on the plan's path reached the client (a 4xx relayed on a stream counts as FAILED). */
        SERVED,
        /** The upstream refused the plan itself (the refusal marker). */
        REFUSED,
        /** The plan's path failed and the request fell back to standard routing. */
        FELL_BACK,
        /** The plan's path failed without fallback (or with a 4xx relayed to a stream client). */
        FAILED,
        /** The request ended otherwise: the client left, or no plan backend could be tried. */
        ABANDONED,
        /**
         * The send on this plan failed and the request's next send took a fresh plan (converting ingresses pin
         * every send); the request's ending is told to the last plan.
         */
        RESENT
    }

    /** Told how a plan ends, on the request's event loop; must not block. */
    @FunctionalInterface
    public interface Listener {
        /** Called exactly once per plan. */
        void ended(Outcome outcome);

        /**
         * The first response bytes of a 2xx answer on the plan's path reached the relay (for a stream, its first
         * event): the upstream has produced its first token. At most once per plan, before {@link #ended}.
         */
        default void firstBytes() {
        }
    }
}
