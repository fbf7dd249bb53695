package dev.continuum.router.eventbus;

import dev.continuum.router.eventbus.config.BrokerEntry;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http2.Http2HeadersFrame;
import io.netty.handler.codec.http2.Http2Headers;
import io.netty.util.ReferenceCountUtil;
import org.jspecify.annotations.Nullable;

/**
 * The first handler of every HTTP/2 stream: reads the request headers, checks path, method, version and
 * credentials, and hands the stream to the control-stream handler or to a commanded stream's acceptor
 * (docs/event-bus-protocol.md, sections 2, 3 and 5). Releases every frame it does not pass on.
 */
final class BusRequestHandler extends ChannelInboundHandlerAdapter {
    private static final io.netty.util.AsciiString OCTETS = io.netty.util.AsciiString.cached("application/octet-stream");

    private final ListenerContext context;

    BusRequestHandler(ListenerContext context) {
        this.context = context;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof Http2HeadersFrame frame)) {
            ReferenceCountUtil.release(msg); // data before headers cannot happen in HTTP/2; drop it anyway
            return;
        }
        Channel stream = ctx.channel();
        Http2Headers headers = frame.headers();
        boolean ended = frame.isEndStream();
        String path = headers.path() == null ? "" : headers.path().toString();
        boolean session = path.equals(BusProtocol.SESSION_PATH);
        String streamId = path.startsWith(BusProtocol.STREAMS_PREFIX)
                ? path.substring(BusProtocol.STREAMS_PREFIX.length()) : null;
        if (!session && (streamId == null || !BusProtocol.STREAM_ID.matcher(streamId).matches())) {
            refuse(ctx, BusErrorCode.NOT_FOUND, "no such resource", ended);
            return;
        }
        if (!HttpMethod.POST.asciiName().contentEquals(headers.method() == null ? "" : headers.method())) {
            refuse(ctx, BusErrorCode.METHOD_NOT_ALLOWED, "only POST", ended);
            return;
        }
        int version = BusProtocol.version(headers.get(BusProtocol.VERSION_HEADER));
        if (version < 0) {
            refuse(ctx, BusErrorCode.UNSUPPORTED_PROTOCOL_VERSION,
                    "continuum-bus-version must name a supported version", ended);
            return;
        }
        ListenerState state = context.state();
        Credentials.Result auth = state.credentials().authenticate(headers.get(HttpHeaderNames.AUTHORIZATION),
                BusConnection.of(stream).certificate());
        BrokerEntry entry = auth.entry();
        if (entry == null) {
            BusErrorCode refusal = auth.refusal();
            refuse(ctx, refusal == null ? BusErrorCode.UNAUTHENTICATED : refusal, auth.reason(), ended);
            return;
        }
        boolean byToken = headers.contains(HttpHeaderNames.AUTHORIZATION);
        if (session || streamId == null) {
            openSession(ctx, entry, byToken, version, ended);
        } else {
            openStream(ctx, entry, version, headers.get(BusProtocol.SESSION_HEADER), streamId, ended);
        }
    }

    private void openSession(ChannelHandlerContext ctx, BrokerEntry entry, boolean byToken, int version,
                             boolean ended) {
        if (ended) {
            refuse(ctx, BusErrorCode.INVALID_MESSAGE, "the session request ended before hello", true);
            return;
        }
        if (!context.sessions.reserve(entry.id())) {
            refuse(ctx, BusErrorCode.TOO_MANY_SESSIONS,
                    "no session slot, or this credential already has a session request waiting for hello", false);
            return;
        }
        ctx.pipeline().replace(this, "bus-control", new ControlStreamHandler(context, entry, byToken, version));
    }

    private void openStream(ChannelHandlerContext ctx, BrokerEntry entry, int version, @Nullable CharSequence sessionId,
                            String streamId, boolean ended) {
        BusSession owner = null;
        if (sessionId != null) {
            for (BusSession s : context.sessions.sessions()) {
                if (s.id().contentEquals(sessionId)) {
                    owner = s;
                    break;
                }
            }
        }
        if (owner == null || !owner.isLive()) {
            refuse(ctx, BusErrorCode.UNKNOWN_STREAM, "no live session " + (sessionId == null ? "named" : "by that ID"),
                    ended);
            return;
        }
        if (!owner.entryId().equals(entry.id())) {
            refuse(ctx, BusErrorCode.FORBIDDEN, "the session belongs to another credential", ended);
            return;
        }
        if (owner.version() != version) {
            refuse(ctx, BusErrorCode.UNSUPPORTED_PROTOCOL_VERSION,
                    "the stream's continuum-bus-version differs from its session's", ended);
            return;
        }
        BusSession.Lookup lookup = owner.lookup(streamId);
        if (lookup == null) {
            refuse(ctx, BusErrorCode.UNKNOWN_STREAM, "the session never commanded this stream", ended);
            return;
        }
        CommandedStream commanded = lookup.stream();
        if (lookup.consumed() || commanded == null || !commanded.open(ctx.channel())) {
            refuse(ctx, BusErrorCode.DUPLICATE_STREAM, "this stream was opened or closed before", ended);
            return;
        }
        Channel stream = ctx.channel();
        BusResponses.accept(stream, OCTETS);
        BusConnection.of(stream).requestAccepted(stream);
        ctx.pipeline().remove(this);
        commanded.handOver(stream);
    }

    private void refuse(ChannelHandlerContext ctx, BusErrorCode code, String message, boolean ended) {
        ctx.pipeline().replace(this, "bus-discard", DiscardHandler.INSTANCE);
        BusResponses.refuse(ctx.channel(), code, message, ended, context.metrics);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        ctx.close();
    }
}
