package dev.continuum.router.eventbus;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.continuum.router.eventbus.config.BrokerEntry;
import dev.continuum.router.eventbus.config.BusRole;
import io.netty.channel.Channel;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * One welcomed session: its credential, what its {@code hello} declared, and the streams it was commanded.
 * Thread-safe: commands come from any thread, data streams arrive on any connection's event loop.
 */
public final class BusSession {
    private static final String STREAM_PREFIX = "st-";

    private final String id;
    private final BrokerEntry entry;
    private final Hello hello;
    private final int version;
    private final int maxStreams;
    private final Channel control;
    private final boolean byToken;
    private final long caGeneration;
    private final Consumer<BusSession> onEnd;
    private final Map<String, CommandedStream> streams = new ConcurrentHashMap<>();
    private final AtomicLong issued = new AtomicLong();
    private final AtomicBoolean ended = new AtomicBoolean();
    private volatile boolean draining;
    private volatile BusErrorCode endCode = BusErrorCode.CLIENT_CLOSED;

    public BusSession(String id, BrokerEntry entry, Hello hello, int version, int maxStreams, Channel control,
               boolean byToken, long caGeneration, Consumer<BusSession> onEnd) {
        this.id = id;
        this.entry = entry;
        this.hello = hello;
        this.version = version;
        this.maxStreams = maxStreams;
        this.control = control;
        this.byToken = byToken;
        this.caGeneration = caGeneration;
        this.onEnd = onEnd;
    }

    /** {@code sess-<32 hex>}. */
    public String id() {
        return id;
    }

    /** The {@code brokers[].id} the session authenticated as. */
    public String entryId() {
        return entry.id();
    }

    public BusRole role() {
        return entry.role();
    }

    /** The configured and announced client ID (the rendezvous hash's salt). */
    public String clientId() {
        return hello.clientId();
    }

    /** Dynamo namespaces a broker session declared. */
    public List<String> namespaces() {
        return hello.namespaces();
    }

    /** Backends a kv_listener session announced. */
    public List<String> backends() {
        return hello.backends();
    }

    public int version() {
        return version;
    }

    public boolean isDraining() {
        return draining;
    }

    public boolean isLive() {
        return !ended.get();
    }

    /** {@code subscribe} commands sent in this session so far. */
    public long commandsIssued() {
        return issued.get();
    }

    /** Streams commanded and not yet closed. */
    public int streamCount() {
        return streams.size();
    }

    public BrokerEntry entry() {
        return entry;
    }

    /** Whether the session authenticated with a token (else with a certificate). */
    public boolean byToken() {
        return byToken;
    }

    /** The client-CA generation current when the session was welcomed. */
    public long caGeneration() {
        return caGeneration;
    }

    public Channel control() {
        return control;
    }

    /**
     * Sends {@code subscribe}; the client answers by opening the data stream (then {@code acceptor} gets it)
     * or with {@code stream_closed} (then {@code acceptor} hears why).
     */
    public CommandedStream subscribe(SubscribeTarget target, String topic, StreamAcceptor acceptor) {
        if (!isLive()) {
            throw new BusCommandException(BusCommandException.Reason.SESSION_CLOSED, "the session ended");
        }
        if (draining) {
            throw new BusCommandException(BusCommandException.Reason.DRAINING, "the session is draining");
        }
        boolean fits = target instanceof SubscribeTarget.ZmqTcp zmq
                ? role() == BusRole.BROKER && namespaces().contains(zmq.namespace())
                : role() == BusRole.KV_LISTENER
                        && backends().contains(((SubscribeTarget.AnnouncedSource) target).backend());
        if (!fits) {
            throw new BusCommandException(BusCommandException.Reason.WRONG_TARGET,
                    "the session does not cover this target");
        }
        if (streams.size() >= maxStreams) {
            throw new BusCommandException(BusCommandException.Reason.TOO_MANY_STREAMS,
                    "the session has " + maxStreams + " streams");
        }
        String streamId = STREAM_PREFIX + HexFormat.of().toHexDigits(issued.incrementAndGet());
        CommandedStream stream = new CommandedStream(this, streamId, target, acceptor);
        streams.put(streamId, stream);
        acceptor.commanded(stream);
        send(subscribeMessage(streamId, target, topic));
        if (!isLive()) {
            stream.close("session_closed", "the session ended");
        }
        return stream;
    }

    private static ObjectNode subscribeMessage(String streamId, SubscribeTarget target, String topic) {
        ObjectNode message = ControlJson.object("subscribe");
        message.put("stream_id", streamId);
        ObjectNode t = message.putObject("target");
        if (target instanceof SubscribeTarget.ZmqTcp zmq) {
            t.put("kind", "zmq_tcp").put("namespace", zmq.namespace()).put("host", zmq.host()).put("port", zmq.port());
            message.put("topic", topic);
        } else {
            SubscribeTarget.AnnouncedSource source = (SubscribeTarget.AnnouncedSource) target;
            t.put("kind", "announced_source").put("backend", source.backend());
            if (source.lastEventId() == null) {
                t.putNull("last_event_id");
            } else {
                t.put("last_event_id", source.lastEventId());
            }
        }
        return message;
    }

    /** Lookup for an arriving data stream: the stream, or whether the ID was issued before (consumed). */
    public record Lookup(@org.jspecify.annotations.Nullable CommandedStream stream, boolean consumed) {
    }

    /** The commanded stream {@code streamId}; null when it was never issued here (404), consumed otherwise (409). */
    @org.jspecify.annotations.Nullable Lookup lookup(String streamId) {
        CommandedStream stream = streams.get(streamId);
        if (stream != null) {
            return new Lookup(stream, stream.state() != CommandedStream.State.COMMANDED);
        }
        if (!streamId.startsWith(STREAM_PREFIX) || streamId.length() != STREAM_PREFIX.length() + 16) {
            return null;
        }
        long n;
        try {
            n = HexFormat.fromHexDigitsToLong(streamId, STREAM_PREFIX.length(), streamId.length());
        } catch (NumberFormatException e) {
            return null;
        }
        // IDs are issued in order and never reused, so a known-format ID at or below the counter was consumed.
        boolean consumed = Long.compareUnsigned(n, 0) > 0 && Long.compareUnsigned(n, issued.get()) <= 0
                && streamId.equals(STREAM_PREFIX + HexFormat.of().toHexDigits(n));
        return consumed ? new Lookup(null, true) : null;
    }

    public void forget(CommandedStream stream) {
        streams.remove(stream.streamId(), stream);
    }

    /** The client's {@code stream_closed}: the ID is consumed whatever state it was in. */
    public void clientClosed(String streamId, String code, String message) {
        CommandedStream stream = streams.get(streamId);
        if (stream != null) {
            stream.close(code, message);
        }
    }

    /** The client's {@code draining}: no more commands; open streams are unsubscribed so they move elsewhere. */
    public boolean drain() {
        if (draining) {
            return false;
        }
        draining = true;
        for (CommandedStream stream : new ArrayList<>(streams.values())) {
            stream.unsubscribe();
        }
        return true;
    }

    public void send(ObjectNode message) {
        if (control.isActive()) {
            control.writeAndFlush(new io.netty.handler.codec.http2.DefaultHttp2DataFrame(
                    ControlJson.line(control.alloc(), message)));
        }
    }

    public BusErrorCode endCode() {
        return endCode;
    }

    /** Ends the session once: its streams close, the registry forgets it, the control stream gets its trailer. */
    public void end(BusErrorCode code) {
        if (!ended.compareAndSet(false, true)) {
            return;
        }
        endCode = code;
        for (CommandedStream stream : new ArrayList<>(streams.values())) {
            stream.close("session_closed", "the session ended: " + code.code());
        }
        onEnd.accept(this);
    }
}
