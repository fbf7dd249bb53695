package dev.continuum.router.proxy;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import dev.continuum.router.core.config.ApiKeyConfig;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufOutputStream;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.jspecify.annotations.Nullable;

/**
 * {@code GET /v1/models}: the models of the client-facing backends that are routable now, filtered by the
 * caller's key, sorted by ID; each owned by the first backend (in configuration order) that serves it. A
 * backend without a configured model list contributes what its health probe reported.
 */
final class ModelsListing {
    private static final JsonFactory JSON = JsonFactory.builder().build();

    private ModelsListing() {
    }

    /** A fresh response (released by the write). */
    static FullHttpResponse of(ProxyState state, @Nullable ApiKeyConfig key, ByteBufAllocator alloc) {
        Map<String, String> models = new TreeMap<>();
        for (Backend b : state.clientFacing) {
            if (!b.resources().health.healthState().routable()) {
                continue;
            }
            if (key != null && !key.allowedBackends().isEmpty() && !key.allowedBackends().contains(b.name())) {
                continue;
            }
            List<String> ids = b.config().models().isEmpty() ? b.resources().health.reportedModels()
                    : b.config().models();
            for (String id : ids) {
                if (key == null || key.allowedModels().isEmpty() || key.allowedModels().contains(id)) {
                    models.putIfAbsent(id, b.name());
                }
            }
        }
        ByteBuf buf = alloc.buffer();
        try (JsonGenerator g = JSON.createGenerator((OutputStream) new ByteBufOutputStream(buf))) {
            g.writeStartObject();
            g.writeStringField("object", "list");
            g.writeArrayFieldStart("data");
            for (Map.Entry<String, String> e : models.entrySet()) {
                g.writeStartObject();
                g.writeStringField("id", e.getKey());
                g.writeStringField("object", "model");
                g.writeNumberField("created", state.createdEpochSeconds);
                g.writeStringField("owned_by", e.getValue());
                g.writeEndObject();
            }
            g.writeEndArray();
            g.writeEndObject();
        } catch (IOException e) {
            buf.release();
            throw new UncheckedIOException(e);
        }
        FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK, buf);
        r.headers().set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_JSON)
                .setInt(HttpHeaderNames.CONTENT_LENGTH, buf.readableBytes());
        return r;
    }
}
