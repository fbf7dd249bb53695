package dev.continuum.router.core.http;

import dev.continuum.router.core.config.ServerConfig;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.codec.http.HttpDecoderConfig;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.timeout.IdleStateHandler;
import java.util.concurrent.TimeUnit;

/**
 * Builds each client connection's pipeline, one small method per concern, in this order:
 * idle timeout, header-read timeout, HTTP codec with the configured line and header limits,
 * the request guard (414/431/400), the trust boundary (strips {@code x-dynamo-*} before anything
 * reads headers), the body limit (413), aggregation (answers {@code 100-continue}), and the
 * request handler. Limits are read from the current configuration for every new connection.
 */
final class HttpChannelInitializer extends ChannelInitializer<Channel> {
    private final ServerContext server;

    HttpChannelInitializer(ServerContext server) {
        this.server = server;
    }

    @Override
    protected void initChannel(Channel ch) {
        server.register(ch);
        ServerConfig config = server.serverConfig();
        ChannelPipeline p = ch.pipeline();
        IdleStateHandler idle = addIdleTimeout(p, config);
        HeaderReadTimeoutHandler headTimeout = addHeaderReadTimeout(p, config);
        addCodec(p, config);
        addRequestGuard(p, headTimeout);
        addTrustBoundary(p);
        addBodyLimit(p, config);
        addAggregator(p, config);
        addRequestHandler(p, idle, headTimeout, config);
    }

    /**
     * Reader idleness only: the request handler restarts the count when it finishes a response, so the
     * connection is idle from the later of its last byte read and its last response. Watching writes too
     * would put a listener on every write, which costs more than the rest of the idle logic together.
     */
    private static IdleStateHandler addIdleTimeout(ChannelPipeline p, ServerConfig config) {
        IdleStateHandler h = new IdleStateHandler(config.idleTimeout().toMillis(), 0, 0, TimeUnit.MILLISECONDS);
        p.addLast("idle", h);
        return h;
    }

    private static HeaderReadTimeoutHandler addHeaderReadTimeout(ChannelPipeline p, ServerConfig config) {
        HeaderReadTimeoutHandler h = new HeaderReadTimeoutHandler(config.headerReadTimeout().toNanos());
        p.addLast("header-timeout", h);
        return h;
    }

    private static void addCodec(ChannelPipeline p, ServerConfig config) {
        p.addLast("codec", new HttpServerCodec(new HttpDecoderConfig()
                .setMaxInitialLineLength(config.maxInitialLineLength().toIntSaturated())
                .setMaxHeaderSize(config.maxHeaderSize().toIntSaturated())
                .setMaxChunkSize(64 * 1024)));
    }

    private static void addRequestGuard(ChannelPipeline p, HeaderReadTimeoutHandler headTimeout) {
        p.addLast("request-guard", new RequestHeadGuardHandler(headTimeout));
    }

    private static void addTrustBoundary(ChannelPipeline p) {
        p.addLast("trust-boundary", StripUntrustedHeadersHandler.INSTANCE);
    }

    private static void addBodyLimit(ChannelPipeline p, ServerConfig config) {
        p.addLast("body-limit", new BodyLimitHandler(config.maxRequestBodySize().bytes()));
    }

    private static void addAggregator(ChannelPipeline p, ServerConfig config) {
        // The body limit already refused anything larger; this bound is the backstop.
        p.addLast("aggregator", new HttpObjectAggregator(config.maxRequestBodySize().toIntSaturated(), true));
    }

    private void addRequestHandler(ChannelPipeline p, IdleStateHandler idle, HeaderReadTimeoutHandler headTimeout,
                                   ServerConfig config) {
        p.addLast("request-handler", new HttpRequestHandler(server, idle, headTimeout,
                config.maxRequestBodySize().bytes()));
    }
}
