package dev.continuum.router.kv.dispatch;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.continuum.router.proxy.prompts.ChatRewrite;
import java.io.IOException;
import org.jspecify.annotations.Nullable;

/**
 * The shim body with the router's token IDs as {@code nvext.token_data} (unsigned 32-bit, as upstream's
 * {@code Vec<u32>}), so {@code dynamo.frontend} skips tokenizing. The client's own {@code token_data} was stripped
 * at admission; this one replaces nothing the client sent.
 */
final class TokenDataBody {
    private TokenDataBody() {
    }

    /** The body's JSON object, or null when it is none. */
    static @Nullable ObjectNode parse(byte[] body) throws IOException {
        return ChatRewrite.parse(body) instanceof ObjectNode o ? o : null; // numbers kept exactly as written
    }

    /** {@code root} (modified) with {@code nvext.token_data} set, serialized. */
    static byte[] with(ObjectNode o, int[] tokens) throws IOException {
        JsonNode nv = o.get("nvext");
        ObjectNode nvext = nv instanceof ObjectNode n ? n : o.putObject("nvext");
        ArrayNode ids = nvext.putArray("token_data");
        for (int t : tokens) {
            ids.add(Integer.toUnsignedLong(t));
        }
        return ChatRewrite.write(o);
    }

    /**
     * The request's cache salt, which seeds the block hashes: {@code nvext.cache_salt} of {@code body}, else the
     * {@code x-tenant-id} header ({@code tenantId}), else null.
     */
    static @Nullable String cacheSalt(JsonNode root, @Nullable String tenantId) {
        JsonNode salt = root.path("nvext").path("cache_salt");
        if (salt.isTextual() && !salt.textValue().isEmpty()) {
            return salt.textValue();
        }
        return tenantId == null || tenantId.isEmpty() ? null : tenantId;
    }
}
