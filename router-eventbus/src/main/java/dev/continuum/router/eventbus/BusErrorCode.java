package dev.continuum.router.eventbus;

import io.netty.handler.codec.http.HttpResponseStatus;
import org.jspecify.annotations.Nullable;

/**
 * Every way the listener refuses a connection or request or ends a session (docs/event-bus-protocol.md,
 * section 6). A closed set: it is also the {@code code} label of the refusal counter.
 */
public enum BusErrorCode {
    TLS_REQUIRED("tls_required", HttpResponseStatus.FORBIDDEN),
    HANDSHAKE_TIMEOUT("handshake_timeout", null),
    HANDSHAKE_FAILED("handshake_failed", null),
    CONNECTION_LIMIT("connection_limit", null),
    AUTH_TIMEOUT("auth_timeout", null),
    NOT_FOUND("not_found", HttpResponseStatus.NOT_FOUND),
    METHOD_NOT_ALLOWED("method_not_allowed", HttpResponseStatus.METHOD_NOT_ALLOWED),
    UNSUPPORTED_PROTOCOL_VERSION("unsupported_protocol_version", HttpResponseStatus.BAD_REQUEST),
    INVALID_MESSAGE("invalid_message", HttpResponseStatus.BAD_REQUEST),
    HELLO_TIMEOUT("hello_timeout", HttpResponseStatus.REQUEST_TIMEOUT),
    UNAUTHENTICATED("unauthenticated", HttpResponseStatus.UNAUTHORIZED),
    CREDENTIAL_REVOKED("credential_revoked", HttpResponseStatus.UNAUTHORIZED),
    FORBIDDEN("forbidden", HttpResponseStatus.FORBIDDEN),
    TOO_MANY_SESSIONS("too_many_sessions", HttpResponseStatus.TOO_MANY_REQUESTS),
    UNKNOWN_STREAM("unknown_stream", HttpResponseStatus.NOT_FOUND),
    DUPLICATE_STREAM("duplicate_stream", HttpResponseStatus.CONFLICT),
    SESSION_SUPERSEDED("session_superseded", null),
    IDLE_TIMEOUT("idle_timeout", null),
    SHUTTING_DOWN("shutting_down", null),
    CLIENT_CLOSED("client_closed", null);

    private final String code;
    private final @Nullable HttpResponseStatus status;

    BusErrorCode(String code, @Nullable HttpResponseStatus status) {
        this.code = code;
        this.status = status;
    }

    /** The wire spelling. */
    public String code() {
        return code;
    }

    /** The HTTP status of a refused request, or null for codes that close a connection or end a session. */
    public @Nullable HttpResponseStatus status() {
        return status;
    }
}
