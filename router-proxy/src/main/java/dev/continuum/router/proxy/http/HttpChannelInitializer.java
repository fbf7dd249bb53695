package dev.continuum.router.proxy.http;

import dev.continuum.router.core.config.ServerConfig;
import dev.continuum.router.proxy.SizedHeaders;
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
 * the lingering close's byte count, idle timeout, header-read timeout, HTTP codec with the configured line and
 * header limits (trailer maps sized by {@link SizedHeaders}), the lingering close's request-end tracker,
 * the request guard (414/431/400/501), the trust boundary (strips {@code x-dynamo-*} before anything
 * reads headers), the body limit (413), the body-read deadline (408), the buffered-bytes budget and
 * connection cap (503), aggregation (answers {@code 100-continue}), and the request handler. Limits
 * are read from the current configuration for every new connection.
 */
final class HttpChannelInitializer extends ChannelInitializer<Channel> {
    private final ServerContext server;

    HttpChannelInitializer(ServerContext server) {
        this.server = server;
    }

    @Override
    protected void initChannel(Channel ch) {
        ServerConfig config = server.serverConfig();
        boolean admitted = admit(ch, config);
        server.register(ch);
        ChannelPipeline p = ch.pipeline();
        LingeringClose linger = addLingeringClose(p, config);
        IdleStateHandler idle = addIdleTimeout(p, config);
        HeaderReadTimeoutHandler headTimeout = addHeaderReadTimeout(p, config);
        addCodec(p, config);
        p.addLast("request-ends", linger.requestEnds());
        addRequestGuard(p, headTimeout, linger);
        addTrustBoundary(p);
        addBodyLimit(p, config);
        addBodyReadTimeout(p, config);
        RequestBufferBudgetHandler budget = addBufferBudget(p, config, !admitted);
        addAggregator(p, config);
        addRequestHandler(p, idle, headTimeout, config, budget, linger);
    }

    /**
     * Counts the connection against {@code max_connections} until it closes. One over the cap is not
     * dropped unanswered: it gets the normal pipeline with the budget handler told to refuse its first
     * request with 503, so the client learns why (its head is still bounded by the header limits and timeout).
     */
    private boolean admit(Channel ch, ServerConfig config) {
        if (server.admitted.incrementAndGet() > config.maxConnections()) {
            server.admitted.decrementAndGet();
            return false;
        }
        ch.closeFuture().addListener(f -> server.admitted.decrementAndGet());
        return true;
    }

    /** Drains at least one maximal body, so any refused request within the body limit can finish sending. */
    private LingeringClose addLingeringClose(ChannelPipeline p, ServerConfig config) {
        IngressLimits limits = server.limits;
        LingeringClose h = new LingeringClose(limits.lingerTime().toNanos(),
                Math.max(limits.lingerBytes(), config.maxRequestBodySize().bytes()));
        p.addLast("linger", h);
        return h;
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

    private HeaderReadTimeoutHandler addHeaderReadTimeout(ChannelPipeline p, ServerConfig config) {
        HeaderReadTimeoutHandler h = new HeaderReadTimeoutHandler(config.headerReadTimeout().toNanos(), server.nanoClock);
        p.addLast("header-timeout", h);
        return h;
    }

    private static void addCodec(ChannelPipeline p, ServerConfig config) {
        p.addLast("codec", new HttpServerCodec(new HttpDecoderConfig()
                .setMaxInitialLineLength(config.maxInitialLineLength().toIntSaturated())
                .setMaxHeaderSize(config.maxHeaderSize().toIntSaturated())
                .setMaxChunkSize(64 * 1024)
                .setTrailersFactory(SizedHeaders.TRAILERS)));
    }

    private static void addRequestGuard(ChannelPipeline p, HeaderReadTimeoutHandler headTimeout,
                                        LingeringClose linger) {
        p.addLast("request-guard", new RequestHeadGuardHandler(headTimeout, linger));
    }

    private static void addTrustBoundary(ChannelPipeline p) {
        p.addLast("trust-boundary", StripUntrustedHeadersHandler.INSTANCE);
    }

    private static void addBodyLimit(ChannelPipeline p, ServerConfig config) {
        p.addLast("body-limit", new BodyLimitHandler(config.maxRequestBodySize().bytes()));
    }

    private void addBodyReadTimeout(ChannelPipeline p, ServerConfig config) {
        p.addLast("body-timeout", new BodyReadTimeoutHandler(config.bodyReadTimeout().toNanos(), server.nanoClock));
    }

    private RequestBufferBudgetHandler addBufferBudget(ChannelPipeline p, ServerConfig config, boolean refuse) {
        RequestBufferBudgetHandler h = new RequestBufferBudgetHandler(server.bufferedBytes, server.bufferBudget(config),
                refuse);
        p.addLast("buffer-budget", h);
        return h;
    }

    private static void addAggregator(ChannelPipeline p, ServerConfig config) {
        // The body limit already refused anything larger; this bound is the backstop.
        p.addLast("aggregator", new HttpObjectAggregator(config.maxRequestBodySize().toIntSaturated(), true));
    }

    private void addRequestHandler(ChannelPipeline p, IdleStateHandler idle, HeaderReadTimeoutHandler headTimeout,
                                   ServerConfig config, RequestBufferBudgetHandler budget, LingeringClose linger) {
        p.addLast("request-handler", new HttpRequestHandler(server, idle, headTimeout,
                config.maxRequestBodySize().bytes(), budget, linger));
    }
}
