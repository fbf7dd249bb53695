package dev.continuum.router.eventplane.zmtp;

import java.util.Objects;

/**
 * What a connector is asked to reach: the publisher's endpoint, the Dynamo namespace it was discovered in
 * (a broker connector places the stream by it) and the topic.
 */
public record ZmtpTarget(String namespace, ZmtpEndpoint endpoint, String topic) {
    public ZmtpTarget {
        Objects.requireNonNull(namespace, "namespace");
        Objects.requireNonNull(endpoint, "endpoint");
        Objects.requireNonNull(topic, "topic");
    }
}
