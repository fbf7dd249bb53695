package dev.continuum.router.eventbus;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.continuum.router.core.logging.LogSafe;
import dev.continuum.router.eventbus.config.BrokerEntry;
import dev.continuum.router.eventbus.config.EventBusConfig;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http2.Http2DataFrame;
import io.netty.handler.codec.http2.Http2HeadersFrame;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The control stream of one session (docs/event-bus-protocol.md, section 4): waits for {@code hello} with a
 * deadline, answers {@code welcome} or the refusal, then reads the client's messages, sends heartbeats and
 * ends the session on silence. Holds the entry's admission reservation until hello is decided. Releases every
 * frame it reads; runs on the connection's event loop only.
 */
final class ControlStreamHandler extends ChannelInboundHandlerAdapter {
    private static final Logger LOG = LoggerFactory.getLogger(ControlStreamHandler.class);

    private final ListenerContext context;
    private final BrokerEntry entry;
    private final boolean byToken;
    private final int version;
    private final LineBuffer lines = new LineBuffer();
    private @Nullable BusSession session;
    private boolean reserved = true;
    private boolean done;
    private long lastHeard;
    private long heartbeatSeq;
    private @Nullable ScheduledFuture<?> helloDeadline;
    private @Nullable ScheduledFuture<?> heartbeats;
    private @Nullable ScheduledFuture<?> idleCheck;

    ControlStreamHandler(ListenerContext context, BrokerEntry entry, boolean byToken, int version) {
        this.context = context;
        this.entry = entry;
        this.byToken = byToken;
        this.version = version;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        helloDeadline = ctx.executor().schedule(() -> refuse(ctx, BusErrorCode.HELLO_TIMEOUT,
                "no hello within " + context.timings.hello().toMillis() + "ms", false),
                context.timings.hello().toNanos(), TimeUnit.NANOSECONDS);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        try {
            if (done) {
                return;
            }
            boolean ended;
            if (msg instanceof Http2DataFrame data) {
                ended = data.isEndStream();
                List<byte[]> read;
                try {
                    read = lines.feed(data.content());
                } catch (LineBuffer.TooLong e) {
                    protocolError(ctx, "a control line longer than " + ControlJson.MAX_LINE_BYTES + " bytes");
                    return;
                }
                for (byte[] line : read) {
                    if (done) {
                        return;
                    }
                    handleLine(ctx, line);
                }
            } else {
                ended = msg instanceof Http2HeadersFrame trailers && trailers.isEndStream();
            }
            if (ended && !done) {
                if (session == null) {
                    refuse(ctx, BusErrorCode.INVALID_MESSAGE, "the session request ended before hello", true);
                } else {
                    session.end(BusErrorCode.CLIENT_CLOSED);
                }
            }
        } finally {
            ReferenceCountUtil.release(msg);
        }
    }

    private void handleLine(ChannelHandlerContext ctx, byte[] line) {
        lastHeard = context.nanoTime.getAsLong();
        ObjectNode message = ControlJson.parseObject(line);
        if (message == null) {
            protocolError(ctx, "a control line is not a JSON object");
            return;
        }
        if (session == null) {
            hello(ctx, message);
            return;
        }
        String type = Hello.text(message.get("type"));
        switch (type == null ? "" : type) {
            case "heartbeat" -> {
                JsonNode seq = message.get("seq");
                if (seq == null || !seq.canConvertToLong() || seq.longValue() < 0) {
                    protocolError(ctx, "heartbeat.seq: expected a non-negative integer");
                    return;
                }
                ObjectNode ack = ControlJson.object("heartbeat_ack");
                ack.put("seq", seq.longValue());
                session.send(ack);
            }
            case "heartbeat_ack" -> {
                // Activity is all an ack proves; lastHeard is already updated.
            }
            case "stream_closed" -> streamClosed(ctx, message);
            case "draining" -> {
                if (session.drain()) {
                    LOG.info("event bus session {} of {} is draining", session.id(), entry.id());
                    context.sessions.changed();
                }
            }
            default -> protocolError(ctx, "unknown or missing message type");
        }
    }

    private void streamClosed(ChannelHandlerContext ctx, ObjectNode message) {
        String streamId = Hello.text(message.get("stream_id"));
        String code = Hello.text(message.get("code"));
        String note = Hello.text(message.get("message"));
        if (streamId == null || !BusProtocol.STREAM_ID.matcher(streamId).matches() || code == null || code.isEmpty()
                || code.length() > 64 || (note != null && note.length() > BusProtocol.MAX_NOTE_BYTES)) {
            protocolError(ctx, "stream_closed: expected stream_id, code (1..64) and an optional message (<= 512)");
            return;
        }
        BusSession s = session;
        if (s != null) {
            s.clientClosed(streamId, code, note == null ? "" : LogSafe.escape(note, BusProtocol.MAX_NOTE_BYTES));
        }
    }

    private void hello(ChannelHandlerContext ctx, ObjectNode message) {
        Hello.Checked checked = Hello.check(message, entry, version);
        Hello hello = checked.hello();
        if (hello == null) {
            Hello.Refusal refusal = checked.refusal();
            refuse(ctx, refusal == null ? BusErrorCode.INVALID_MESSAGE : refusal.code(),
                    refusal == null ? "bad hello" : refusal.message(), false);
            return;
        }
        ListenerState state = context.state();
        EventBusConfig config = state.config();
        Channel channel = ctx.channel();
        BusSession created = new BusSession(context.newSessionId(), entry, hello, version,
                config.maxStreamsPerSession(), channel, byToken, state.credentials().caGeneration(), this::sessionEnded);
        cancelHelloDeadline();
        reserved = false;
        try {
            context.sessions.welcome(created);
        } catch (IllegalStateException e) {
            refuse(ctx, BusErrorCode.TOO_MANY_SESSIONS, "no session slot", false);
            return;
        }
        session = created;
        BusResponses.accept(channel, BusResponses.NDJSON);
        created.send(welcome(created, config));
        BusConnection.of(channel).requestAccepted(channel);
        LOG.info("event bus session {} welcomed: {} {} as {}", created.id(), entry.role().label(), entry.id(),
                byToken ? "token" : "certificate");
        long beat = config.heartbeatInterval().toNanos();
        heartbeats = ctx.executor().scheduleAtFixedRate(() -> {
            ObjectNode hb = ControlJson.object("heartbeat");
            hb.put("seq", ++heartbeatSeq);
            created.send(hb);
        }, beat, beat, TimeUnit.NANOSECONDS);
        scheduleIdleCheck(ctx, config.idleTimeout().toNanos());
    }

    private void scheduleIdleCheck(ChannelHandlerContext ctx, long delayNanos) {
        idleCheck = ctx.executor().schedule(() -> {
            BusSession s = session;
            if (s == null || done) {
                return;
            }
            long idle = context.state().config().idleTimeout().toNanos();
            long silent = context.nanoTime.getAsLong() - lastHeard;
            if (silent >= idle) {
                s.end(BusErrorCode.IDLE_TIMEOUT);
            } else {
                scheduleIdleCheck(ctx, idle - silent);
            }
        }, delayNanos, TimeUnit.NANOSECONDS);
    }

    private static ObjectNode welcome(BusSession session, EventBusConfig config) {
        ObjectNode welcome = ControlJson.object("welcome");
        welcome.put("session_id", session.id());
        welcome.put("version", session.version());
        ObjectNode limits = welcome.putObject("limits");
        limits.put("max_streams", config.maxStreamsPerSession());
        limits.put("stream_buffer_bytes", config.streamBufferBytes());
        limits.put("session_buffer_bytes", config.maxSessionBufferBytes());
        limits.put("max_message_bytes", ControlJson.MAX_LINE_BYTES);
        limits.put("heartbeat_interval_ms", config.heartbeatInterval().toMillis());
        limits.put("idle_timeout_ms", config.idleTimeout().toMillis());
        return welcome;
    }

    /** A malformed line: refused before welcome, the end of the session after. */
    private void protocolError(ChannelHandlerContext ctx, String why) {
        if (session == null) {
            refuse(ctx, BusErrorCode.INVALID_MESSAGE, why, false);
        } else {
            LOG.info("event bus session {} of {} ends: {}", session.id(), entry.id(), why);
            session.end(BusErrorCode.INVALID_MESSAGE);
        }
    }

    private void refuse(ChannelHandlerContext ctx, BusErrorCode code, String message, boolean requestEnded) {
        if (done) {
            return;
        }
        done = true;
        cancelHelloDeadline();
        releaseReservation();
        LOG.debug("event bus session request of {} refused: {} ({})", entry.id(), code.code(),
                LogSafe.escape(message));
        BusResponses.refuse(ctx.channel(), code, message, requestEnded, context.metrics);
    }

    /** Runs on whatever thread ended the session; the stream's own loop writes the trailer. */
    private void sessionEnded(BusSession ended) {
        context.sessions.ended(ended);
        if (ended.endCode() != BusErrorCode.CLIENT_CLOSED) {
            context.metrics.refused(ended.endCode());
        }
        LOG.info("event bus session {} of {} ended: {}", ended.id(), entry.id(), ended.endCode().code());
        Channel channel = ended.control();
        channel.eventLoop().execute(() -> {
            done = true;
            cancel(heartbeats);
            cancel(idleCheck);
            if (channel.isActive()) {
                BusResponses.closeSession(channel, ended.endCode());
                // Trailers end our half; a client still sending is told to stop.
                channel.eventLoop().execute(channel::close);
            }
        });
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        cancelHelloDeadline();
        releaseReservation();
        BusSession s = session;
        if (s != null) {
            s.end(BusErrorCode.CLIENT_CLOSED);
        }
        super.channelInactive(ctx);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        ctx.close();
    }

    private void releaseReservation() {
        if (reserved) {
            reserved = false;
            context.sessions.release(entry.id());
        }
    }

    private void cancelHelloDeadline() {
        cancel(helloDeadline);
    }

    private static void cancel(@Nullable ScheduledFuture<?> future) {
        if (future != null) {
            future.cancel(false);
        }
    }
}
