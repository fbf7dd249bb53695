package dev.continuum.router.testing;

import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * What {@link TestUpstream} answers to one {@code POST /v1/chat/completions} or
 * {@code POST /v1/completions}. Queue replies with {@link TestUpstream#enqueue(Reply)} or set the
 * default with {@link TestUpstream#defaultReply(Reply)}.
 */
public sealed interface Reply {

    /** 200 JSON that echoes what the upstream received: path, headers, body. */
    static Reply echo() {
        return new Echo(200);
    }

    /** A fixed answer with a JSON content type. */
    static Reply status(int status, String body) {
        return new Fixed(status, "application/json", body, Map.of());
    }

    /** A fixed answer with an explicit content type and extra headers. */
    static Reply fixed(int status, String contentType, String body, Map<String, String> headers) {
        return new Fixed(status, contentType, body, headers);
    }

    /** {@code then}, after {@code delay}. */
    static Reply delayed(Duration delay, Reply then) {
        return new Delayed(delay, then);
    }

    /** An SSE stream whose events are sent at once, then {@code data: [DONE]}. */
    static Reply sse(List<String> events) {
        return new Sse(List.copyOf(events));
    }

    /**
     * An SSE stream the test drives: the response head goes out at once, then the test takes the
     * {@link StreamHandle} from {@link TestUpstream#awaitStream(Duration)} and sends each event.
     */
    static Reply controlledStream() {
        return new ControlledStream();
    }

    /**
     * A chunked {@code text/event-stream} of {@code totalBytes} that is written only while the
     * upstream's channel is writable, so a slow reader downstream stalls it (backpressure tests).
     */
    static Reply bulkStream(long totalBytes, int chunkSize) {
        return new BulkStream(totalBytes, chunkSize);
    }

    /** Close the connection without answering. */
    static Reply closeConnection() {
        return new CloseConnection();
    }

    record Echo(int status) implements Reply {
    }

    record Fixed(int status, String contentType, String body, Map<String, String> headers) implements Reply {
        public Fixed {
            headers = Map.copyOf(headers);
        }
    }

    record Delayed(Duration delay, Reply then) implements Reply {
    }

    record Sse(List<String> events) implements Reply {
    }

    record ControlledStream() implements Reply {
    }

    record BulkStream(long totalBytes, int chunkSize) implements Reply {
        public BulkStream {
            if (chunkSize < 1) {
                throw new IllegalArgumentException("chunkSize: " + chunkSize + " (expected: >= 1)");
            }
        }
    }

    record CloseConnection() implements Reply {
    }
}
