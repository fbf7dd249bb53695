package dev.continuum.router.proxy.metrics;

/**
 * The {@code reason} label of {@code continuum_stream_aborts_total}: why a response whose head went to the client did
 * not end as the upstream's answer. A closed set; each reason belongs to one {@link StreamSide}.
 */
public enum StreamAbort {
    /** The client closed its connection before the response ended. */
    CLIENT_CLOSED("client_closed", StreamSide.CLIENT),
    /** The upstream closed its connection, or its body ended before its framing said it would. */
    UPSTREAM_CLOSED("upstream_closed", StreamSide.UPSTREAM),
    /** An upstream event is not a JSON object (a converting ingress reads every event). */
    INVALID_EVENT("invalid_event", StreamSide.UPSTREAM),
    /** An upstream event is larger than the proxy holds ({@code IngressConverter.MAX_EVENT_BYTES}). */
    OVERSIZED_EVENT("oversized_event", StreamSide.UPSTREAM),
    /** An answer with more tool calls than a converter tracks. */
    TOO_MANY_TOOL_CALLS("too_many_tool_calls", StreamSide.UPSTREAM),
    /** A fragment of an earlier tool call after a later block opened. */
    INTERLEAVED_TOOL_CALLS("interleaved_tool_calls", StreamSide.UPSTREAM),
    /** An answer longer than a converter that holds it (the Responses wire) may hold. */
    ANSWER_TOO_LONG("answer_too_long", StreamSide.UPSTREAM),
    /** No chunk within {@code timeouts.request.streaming.chunk_interval}. */
    CHUNK_INTERVAL("chunk_interval", StreamSide.UPSTREAM),
    /** Nothing from the upstream for {@code server.idle_timeout} mid-response. */
    IDLE_TIMEOUT("idle_timeout", StreamSide.UPSTREAM),
    /** The attempt's request timeout ran out mid-response. */
    REQUEST_TIMEOUT("request_timeout", StreamSide.UPSTREAM);

    private final String label;
    private final StreamSide side;

    StreamAbort(String label, StreamSide side) {
        this.label = label;
        this.side = side;
    }

    public String label() {
        return label;
    }

    public StreamSide side() {
        return side;
    }

    /** Whether the upstream stopped answering in time (the wire's timeout error), rather than answering wrong. */
    public boolean timeout() {
        return this == CHUNK_INTERVAL || this == IDLE_TIMEOUT || this == REQUEST_TIMEOUT;
    }
}
