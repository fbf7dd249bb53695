package dev.continuum.router.proxy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufInputStream;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.io.InputStream;
import java.util.Set;

/**
 * The body half of the trust boundary: the routing fields of a request's top-level
 * {@code nvext} object, which would pin a Dynamo worker as the {@code x-dynamo-*} headers do.
 * {@link RequestBodyInspector} notices them while it streams over the body; only then is the body
 * rewritten without them (a tree parse and a new buffer), so ordinary bodies are forwarded as the
 * very bytes the client sent.
 */
public final class UntrustedBodyFields {
    /** Fields of {@code nvext} a client may not set. */
    public static final Set<String> NVEXT_ROUTING_FIELDS = Set.of(
            "backend_instance_id", "prefill_worker_id", "decode_worker_id", "dp_rank", "prefill_dp_rank",
            "token_data");

    private static final ObjectMapper JSON = new ObjectMapper();

    private UntrustedBodyFields() {
    }

    /**
     * A new buffer holding {@code body} without the routing fields of its {@code nvext} object.
     * {@code body} must be a JSON object (already checked by the inspector); it is not released.
     */
    public static ByteBuf strip(ByteBuf body) throws IOException {
        JsonNode root;
        try (InputStream in = new ByteBufInputStream(body.duplicate())) {
            root = JSON.readTree(in);
        }
        if (root instanceof ObjectNode o && o.get("nvext") instanceof ObjectNode nvext) {
            nvext.remove(NVEXT_ROUTING_FIELDS);
        }
        return Unpooled.wrappedBuffer(JSON.writeValueAsBytes(root));
    }
}
