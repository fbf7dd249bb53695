package dev.continuum.router.proxy;

import dev.continuum.router.core.config.BackendConfig;
import dev.continuum.router.core.config.RouterConfig;
import dev.continuum.router.core.logging.LogSafe;
import dev.continuum.router.proxy.prompts.ChatRewrite;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One chat request's rewrites under the config it was admitted with: the body each attempt sends to its backend.
 * The last rewritten body is kept, so retries on backends with the same rewrite reuse it. Event-loop confined.
 */
final class ChatBodies implements ChatRewrites {
    private static final Logger log = LoggerFactory.getLogger(ChatBodies.class);

    private final RouterConfig config;
    private @Nullable String model;
    private @Nullable ChatRewrite lastRewrite;
    private @Nullable String lastModel;
    private byte @Nullable [] lastBytes;

    private ChatBodies(RouterConfig config) {
        this.config = config;
    }

    /** Whether {@code config} rewrites any chat body; decided once per config ({@link ProxyState}), not per request. */
    static boolean anyRewrite(RouterConfig config) {
        if (config.globalPrompts() != null) {
            return true;
        }
        for (BackendConfig b : config.backends()) {
            if (b.requiresSingleLeadingSystem()) {
                return true;
            }
        }
        return false;
    }

    /** The rewrites of a chat request, or null when its config rewrites no chat body (nothing is allocated). */
    static @Nullable ChatBodies of(ProxyState state) {
        return state.rewritesChatBodies ? new ChatBodies(state.config) : null;
    }

    /** The model the body now names (a fallback changes it). */
    void model(String m) {
        model = m;
    }

    @Override
    public ChatRewrite forBackend(String backend) {
        String m = model;
        return m == null ? ChatRewrite.NONE : config.backend(backend)
                .map(b -> ChatRewrite.of(config.globalPrompts(), m, b)).orElse(ChatRewrite.NONE);
    }

    /**
     * The body to send to {@code backend}: {@code body} itself when it gets no rewrite (or is not a JSON object,
     * which admission already refused), else a new buffer the caller releases.
     */
    ByteBuf bodyFor(BackendConfig backend, ByteBuf body) {
        String m = Objects.requireNonNull(model, "model");
        ChatRewrite r = ChatRewrite.of(config.globalPrompts(), m, backend);
        if (r.none()) {
            return body;
        }
        byte[] bytes = lastBytes;
        if (bytes == null || !r.equals(lastRewrite) || !m.equals(lastModel)) {
            try {
                bytes = r.apply(ByteBufUtil.getBytes(body));
            } catch (IOException | RuntimeException e) {
                log.debug("chat body not rewritten: {}", LogSafe.escape(e));
                bytes = null;
            }
            if (bytes == null) {
                return body;
            }
            lastRewrite = r;
            lastModel = m;
            lastBytes = bytes;
        }
        return Unpooled.wrappedBuffer(bytes);
    }
}
