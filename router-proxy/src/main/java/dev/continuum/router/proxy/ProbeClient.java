package dev.continuum.router.proxy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.continuum.router.core.config.Secret;
import io.netty.buffer.ByteBufInputStream;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.EventLoop;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpVersion;
import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * One-shot health probes: a fresh connection per probe ({@code Connection: close}), so probing
 * never disturbs the request pool and a probe measures connectability too. The answer is
 * aggregated up to {@link UpstreamLimits#maxProbeBodyBytes()} (a larger one is a failed probe).
 * Buffers: the aggregated response is released by {@link SimpleChannelInboundHandler}.
 */
final class ProbeClient {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** @param status the HTTP status, or 0 when the probe got no answer; models is null unless asked and parseable */
    record ProbeResult(int status, @Nullable List<String> models) {
        static final ProbeResult NO_ANSWER = new ProbeResult(0, null);
    }

    private final UpstreamTransport transport;

    ProbeClient(UpstreamTransport transport) {
        this.transport = transport;
    }

    /** Completes on {@code loop}, never exceptionally. */
    CompletableFuture<ProbeResult> probe(EventLoop loop, BackendEndpoint endpoint, String path, @Nullable Secret apiKey,
                                         Duration connectTimeout, Duration timeout, boolean parseModels) {
        CompletableFuture<ProbeResult> result = new CompletableFuture<>();
        UpstreamLimits limits = transport.limits;
        ChannelFuture cf = transport.connect(loop, endpoint.host(), endpoint.port(),
                connectTimeout.compareTo(timeout) < 0 ? connectTimeout : timeout,
                new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        ChannelPipeline p = ch.pipeline();
                        if (endpoint.tls()) {
                            p.addLast(transport.ssl().newHandler(ch.alloc(), endpoint.host(), endpoint.port()));
                        }
                        p.addLast(new HttpClientCodec(limits.maxResponseInitialLineLength(),
                                limits.maxResponseHeaderSize(), limits.maxChunkSize()));
                        p.addLast(new HttpObjectAggregator(limits.maxProbeBodyBytes()));
                        p.addLast(new ProbeHandler(result, parseModels, limits.maxReportedModels()));
                    }
                });
        var deadline = loop.schedule(() -> {
            if (result.complete(ProbeResult.NO_ANSWER)) {
                cf.channel().close();
            }
        }, timeout.toNanos(), TimeUnit.NANOSECONDS);
        result.whenComplete((r, e) -> deadline.cancel(false));
        cf.addListener(done -> {
            if (!done.isSuccess()) {
                result.complete(ProbeResult.NO_ANSWER);
                return;
            }
            FullHttpRequest req = new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.GET,
                    endpoint.target(path, null), Unpooled.EMPTY_BUFFER);
            req.headers().set(HttpHeaderNames.HOST, endpoint.hostHeader())
                    .set(HttpHeaderNames.ACCEPT, HttpHeaderValues.APPLICATION_JSON)
                    .set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE)
                    .set(HttpHeaderNames.USER_AGENT, "continuum-router-health")
                    .setInt(HttpHeaderNames.CONTENT_LENGTH, 0);
            if (apiKey != null) {
                req.headers().set(HttpHeaderNames.AUTHORIZATION, "Bearer " + apiKey.reveal());
            }
            cf.channel().writeAndFlush(req).addListener(w -> {
                if (!w.isSuccess()) {
                    result.complete(ProbeResult.NO_ANSWER);
                    cf.channel().close();
                }
            });
        });
        return result;
    }

    private static final class ProbeHandler extends SimpleChannelInboundHandler<FullHttpResponse> {
        private final CompletableFuture<ProbeResult> result;
        private final boolean parseModels;
        private final int maxModels;

        ProbeHandler(CompletableFuture<ProbeResult> result, boolean parseModels, int maxModels) {
            this.result = result;
            this.parseModels = parseModels;
            this.maxModels = maxModels;
        }

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, FullHttpResponse res) {
            int status = res.decoderResult().isSuccess() ? res.status().code() : 0;
            List<String> models = null;
            if (parseModels && status / 100 == 2) {
                models = parseModelIds(res, maxModels);
            }
            result.complete(new ProbeResult(status, models));
            ctx.close();
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            result.complete(ProbeResult.NO_ANSWER);
            ctx.fireChannelInactive();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            // TooLongFrameException for an oversized answer lands here too: a failed probe.
            result.complete(ProbeResult.NO_ANSWER);
            ctx.close();
        }
    }

    /** {@code {"data":[{"id":...}, ...]}} to ids; null when the answer is not that shape. */
    static @Nullable List<String> parseModelIds(FullHttpResponse res, int maxModels) {
        try (InputStream in = new ByteBufInputStream(res.content().duplicate())) {
            JsonNode data = JSON.readTree(in).path("data");
            if (!data.isArray()) {
                return null;
            }
            List<String> ids = new ArrayList<>();
            for (JsonNode m : data) {
                JsonNode id = m.path("id");
                if (id.isTextual() && !id.asText().isEmpty()) {
                    ids.add(id.asText());
                    if (ids.size() >= maxModels) {
                        break;
                    }
                }
            }
            return List.copyOf(ids);
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }
}
