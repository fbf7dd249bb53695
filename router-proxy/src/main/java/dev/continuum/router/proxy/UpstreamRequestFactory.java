package dev.continuum.router.proxy;

import dev.continuum.router.proxy.auth.AuthResult;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.DefaultHttpHeadersFactory;
import io.netty.handler.codec.http.EmptyHttpHeaders;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.util.AsciiString;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * Builds one attempt's upstream request from the client's headers and the body to send: hop-by-hop and
 * untrusted headers dropped, router credentials never forwarded (a backend key replaces the client's
 * {@code Authorization}), the plan's pin headers set last so nothing the client sent can shadow them, and on the
 * plan's path the plan's decision id ({@code x-continuum-decision-id}).
 * Pure: reads its inputs, allocates only the new request.
 */
final class UpstreamRequestFactory {
    private static final AsciiString X_API_KEY = AsciiString.cached("x-api-key");

    private UpstreamRequestFactory() {
    }

    /**
     * One attempt's request to {@code b}: a converted request is a chat completion wherever the client sent it; on
     * the plan's path it carries the plan's pin headers, and the plan's own body when it has one (a fallback sends
     * the request's body again).
     */
    static FullHttpRequest forAttempt(ClientExchange client, @Nullable IngressConverter converter, boolean passthrough,
            @Nullable PlanGuard guard, AuthResult.@Nullable CredentialSource credentials, Backend b, ByteBuf body,
            @Nullable ChatBodies chatBodies) {
        BackendEndpoint endpoint = b.resources().endpoint;
        String target = converter == null ? endpoint.target(client.path(), client.rawQuery())
                : endpoint.target(ProxyRoute.CHAT_UPSTREAM_PATH, null);
        Map<String, String> pins = guard == null ? Map.of() : guard.pinHeaders();
        // A passthrough (another wire sent unconverted) is pinned by model alone: neither a plan's body (a chat
        // completion) nor a chat rewrite is ever applied to it.
        DispatchPlan.PinnedBody pinnedBody = guard == null || passthrough ? null : guard.pinnedBody();
        // A plan's own body replaces the request's on its path only (a fallback sends the request's again), and it
        // carries the backend's rewrites already; off the plan's path the backend's rewrites (global_prompts) apply.
        ByteBuf out = pinnedBody != null ? Unpooled.wrappedBuffer(pinnedBody.bytes())
                : chatBodies == null || passthrough ? body : chatBodies.bodyFor(b.config(), body);
        try {
            FullHttpRequest r = build(client.request().headers(), client.request().method(), credentials, b, pins, out,
                    target);
            String decision = guard == null ? null : guard.upstreamDecisionId();
            if (decision != null) {
                // The client's own value was dropped with the untrusted headers; this one is the router's.
                r.headers().set(UntrustedHeaders.DECISION_ID, decision);
            }
            return r;
        } finally {
            if (out != body) {
                out.release(); // the request holds its own retained duplicate
            }
        }
    }

    /**
     * @param pinHeaders the plan's headers for this attempt (empty off the plan's path)
     * @param body       sent as a retained duplicate, so every attempt sends the same bytes
     * @param target     the request target on the backend
     */
    static FullHttpRequest build(HttpHeaders in, HttpMethod method, AuthResult.@Nullable CredentialSource credentials,
                                 Backend b, Map<String, String> pinHeaders, ByteBuf body, String target) {
        HttpHeaders out = DefaultHttpHeadersFactory.headersFactory().withValidation(false).newHeaders();
        List<String> listed = HopByHop.connectionListed(in);
        AsciiString backendAuth = b.authorization();
        Iterator<Map.Entry<CharSequence, CharSequence>> it = in.iteratorCharSequence();
        while (it.hasNext()) {
            Map.Entry<CharSequence, CharSequence> e = it.next();
            CharSequence name = e.getKey();
            if (HopByHop.isRequestHopByHop(name) || UntrustedHeaders.isUntrusted(name)
                    || (!listed.isEmpty() && HopByHop.listed(listed, name))) {
                continue;
            }
            // Router keys are ours, not the upstream's; a backend key replaces the client's.
            if (HttpHeaderNames.AUTHORIZATION.contentEqualsIgnoreCase(name)
                    && (backendAuth != null || credentials == AuthResult.CredentialSource.AUTHORIZATION)) {
                continue;
            }
            if (X_API_KEY.contentEqualsIgnoreCase(name) && credentials == AuthResult.CredentialSource.X_API_KEY) {
                continue;
            }
            out.add(name, e.getValue());
        }
        if (!pinHeaders.isEmpty()) {
            for (Map.Entry<String, String> e : pinHeaders.entrySet()) {
                out.set(e.getKey(), e.getValue());
            }
        }
        out.set(HttpHeaderNames.HOST, b.resources().endpoint.hostHeader());
        if (backendAuth != null) {
            out.set(HttpHeaderNames.AUTHORIZATION, backendAuth);
        }
        out.setInt(HttpHeaderNames.CONTENT_LENGTH, body.readableBytes());
        return new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, method, target, body.retainedDuplicate(), out,
                EmptyHttpHeaders.INSTANCE);
    }
}
