package dev.continuum.router.agents;

import dev.continuum.router.eventbus.BackendTls;
import dev.continuum.router.eventbus.Hello;
import dev.continuum.router.eventbus.SseUpstream;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.continuum.router.eventbus.config.BackendTrust;
import io.netty.channel.ChannelHandler;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.ssl.SslContext;
import java.net.URI;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The kv-listener: announces its backends and, for each {@code subscribe}, relays the SSE body of that backend's
 * KV-event stream, resuming after the router's {@code last_event_id}. Only the announced backends' configured
 * URLs are ever dialled, so the bus cannot reach anything else in the cluster.
 */
public final class KvListenerRole implements AgentRole {

    private final List<String> order;
    private final Map<String, URI> sources;
    /** One verifying context per {@code https} source, built once: a context is immutable and slow to make. */
    private final Map<String, SslContext> tls;

    /** @param sources each announced backend's SSE URL ({@code http://host:port/path}), in announcement order */
    public KvListenerRole(Map<String, URI> sources) {
        this(sources, Map.of());
    }

    /** @param trust the CA bundle of each {@code https} source that has one; the others use the JDK's trust store */
    public KvListenerRole(Map<String, URI> sources, Map<String, BackendTrust> trust) {
        this.order = List.copyOf(sources.keySet());
        this.sources = Map.copyOf(sources);
        Map<String, SslContext> contexts = new HashMap<>();
        sources.forEach((backend, url) -> {
            if (BackendTls.isHttps(url)) {
                contexts.put(backend, BackendTls.context(trust.get(backend)));
            }
        });
        this.tls = Map.copyOf(contexts);
    }

    @Override
    public void describe(ObjectNode hello) {
        hello.put("role", "kv_listener");
        ArrayNode announced = hello.putArray("sources");
        for (String backend : order) {
            announced.addObject().put("backend", backend);
        }
    }

    @Override
    public Choice choose(JsonNode target) {
        String kind = Hello.text(target.get("kind"));
        String backend = Hello.text(target.get("backend"));
        if (!"announced_source".equals(kind) || backend == null) {
            return new Refusal("invalid_target", "a kv_listener relays announced_source targets only");
        }
        URI url = sources.get(backend);
        if (url == null) {
            return new Refusal("target_not_advertised", "this kv-listener does not announce that backend");
        }
        JsonNode last = target.get("last_event_id");
        Long lastEventId = null;
        if (last != null && !last.isNull()) {
            if (!last.canConvertToLong() || !last.isIntegralNumber() || last.asLong() < 0) {
                return new Refusal("invalid_target", "last_event_id: expected null or a u64");
            }
            lastEventId = last.asLong();
        }
        Long resume = lastEventId;
        int port = BackendTls.port(url);
        SslContext context = tls.get(backend);
        return new Upstream(url.getHost(), port, channel -> {
            List<ChannelHandler> handlers = new ArrayList<>(3);
            if (context != null) {
                handlers.add(BackendTls.handler(context, channel, url)); // RelayStream waits for its handshake
            }
            handlers.add(new HttpClientCodec(SseUpstream.MAX_INITIAL_LINE, SseUpstream.MAX_HEADER_BYTES,
                    SseUpstream.MAX_CHUNK_BYTES));
            handlers.add(new SseUpstream(url, port, resume));
            return handlers;
        });
    }
}
