package dev.continuum.router.eventbus;

import org.jspecify.annotations.Nullable;

/** What a {@code subscribe} command asks the client to dial (docs/event-bus-protocol.md, section 4.2). */
public sealed interface SubscribeTarget {
    /** A publisher endpoint in a Dynamo namespace, for a {@code broker} session. */
    public record ZmqTcp(String namespace, String host, int port) implements SubscribeTarget {
        public ZmqTcp {
            if (port < 1 || port > 65535) {
                throw new IllegalArgumentException("port: " + port + " (expected: 1..65535)");
            }
        }
    }

    /** An announced KV source, for a {@code kv_listener} session; resumes after {@code lastEventId} when set. */
    public record AnnouncedSource(String backend, @Nullable Long lastEventId) implements SubscribeTarget {
    }
}
