package dev.continuum.router.proxy.auth;

import dev.continuum.router.core.config.ApiKeysConfig;
import io.netty.handler.codec.http.HttpHeaders;
import java.time.Clock;

/**
 * Checks client API keys on the {@code /v1/*} routes. A key is read from
 * {@code Authorization: Bearer <key>} or {@code x-api-key}.
 *
 * <ul>
 *   <li>{@code blocking}: a missing, unknown, disabled or expired key is refused (401).</li>
 *   <li>{@code permissive} with keys configured: a request without a key passes anonymously; a
 *       key that is presented but unknown (or disabled/expired) is refused (401), so a typo is
 *       never silently served without its policy.</li>
 *   <li>{@code permissive} with no key configured: authentication is off; every request passes
 *       and the client's {@code Authorization} is forwarded (it belongs to the upstream).</li>
 * </ul>
 *
 * Keys are compared as SHA-256 digests in constant time; only a key's {@code id} is ever logged.
 */
public interface ApiKeyAuthenticator {

    static ApiKeyAuthenticator create(ApiKeysConfig config, Clock clock) {
        return new DigestApiKeyAuthenticator(config, clock);
    }

    AuthResult authenticate(HttpHeaders headers);

    /** False when authentication is off (permissive mode without keys). */
    boolean enabled();
}
