package dev.continuum.router.shim;

import dev.continuum.router.load.SampleKey;
import org.jspecify.annotations.Nullable;

/**
 * Session affinity's seam (docs/replicas.md): the dispatcher asks which decode rank a request's session is bound
 * to before the pick (the picker takes that rank while it is a candidate and not stalled) and tells where the
 * session went after it, so the next turn follows. Installed with {@link ShimDispatcher#sessions}; router-replicas
 * keeps the bindings and shares them with its peers.
 *
 * <p>Both calls run on the picking thread for every request that carries a session, so they never block.
 */
public interface SessionAffinity {
    /** The longest session ID bound; a longer one is routed as if it had none. */
    int MAX_SESSION_ID = 128;

    /** No affinity: the picker decides every turn on its own. */
    SessionAffinity NONE = new SessionAffinity() {
        @Override
        public @Nullable SampleKey bound(String session) {
            return null;
        }

        @Override
        public void bind(String session, WorkerPin decode) {
        }
    };

    /** The decode rank {@code session} is bound to, or null. */
    @Nullable SampleKey bound(String session);

    /** The request of {@code session} was dispatched to {@code decode}: (re)bind it there. */
    void bind(String session, WorkerPin decode);

    /** {@code header} when it is a usable session ID (1 to 128 printable ASCII characters), else null. */
    static @Nullable String sessionId(@Nullable String header) {
        if (header == null || header.isEmpty() || header.length() > MAX_SESSION_ID) {
            return null;
        }
        for (int i = 0; i < header.length(); i++) {
            char c = header.charAt(i);
            if (c < 0x21 || c > 0x7E) {
                return null;
            }
        }
        return header;
    }
}
