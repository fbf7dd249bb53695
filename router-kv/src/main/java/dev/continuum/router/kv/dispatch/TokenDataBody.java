package dev.continuum.router.kv.dispatch;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import org.jspecify.annotations.Nullable;

/**
 * The shim body with the router's token IDs as {@code nvext.token_data} (unsigned 32-bit, as upstream's
 * {@code Vec<u32>}), so {@code dynamo.frontend} skips tokenizing. The client's own {@code token_data} was stripped
 * at admission; this one replaces nothing the client sent.
 */
final class TokenDataBody {
    private static final ObjectMapper JSON = new ObjectMapper();

    private TokenDataBody() {
    }

    /** The body's JSON object, or null when it is none. */
    static @Nullable ObjectNode parse(byte[] body) throws IOException {
        return JSON.readTree(body) instanceof ObjectNode o ? o : null;
    }

    /** {@code root} (modified) with {@code nvext.token_data} set, serialized. */
    static byte[] with(ObjectNode o, int[] tokens) throws IOException {
        JsonNode nv = o.get("nvext");
        ObjectNode nvext = nv instanceof ObjectNode n ? n : o.putObject("nvext");
        ArrayNode ids = nvext.putArray("token_data");
        for (int t : tokens) {
            ids.add(Integer.toUnsignedLong(t));
        }
        return JSON.writeValueAsBytes(o);
    }

    /** {@code nvext.cache_salt} of {@code body}, or null (it seeds the block hashes, as upstream's). */
    static @Nullable String cacheSalt(JsonNode root) {
        JsonNode salt = root.path("nvext").path("cache_salt");
        return salt.isTextual() && !salt.textValue().isEmpty() ? salt.textValue() : null;
    }
}
