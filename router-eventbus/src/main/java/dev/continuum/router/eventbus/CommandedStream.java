package dev.continuum.router.eventbus;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.netty.channel.Channel;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;

/**
 * One {@code subscribe} a session sent: commanded, then open (a data stream arrived), then closed. Each
 * transition is one compare-and-set, so a data stream, a {@code stream_closed} and an {@code unsubscribe}
 * racing on different threads agree on one outcome, and an ID is consumed exactly once.
 */
public final class CommandedStream {
    enum State {
        COMMANDED,
        OPEN,
        CLOSED
    }

    private final BusSession session;
    private final String streamId;
    private final SubscribeTarget target;
    private final StreamAcceptor acceptor;
    private final AtomicReference<State> state = new AtomicReference<>(State.COMMANDED);
    private volatile @Nullable Channel channel;

    CommandedStream(BusSession session, String streamId, SubscribeTarget target, StreamAcceptor acceptor) {
        this.session = session;
        this.streamId = streamId;
        this.target = target;
        this.acceptor = acceptor;
    }

    public String streamId() {
        return streamId;
    }

    public SubscribeTarget target() {
        return target;
    }

    public BusSession session() {
        return session;
    }

    State state() {
        return java.util.Objects.requireNonNull(state.get());
    }

    /** The router no longer wants it: sends {@code unsubscribe} and closes the data stream if it is open. */
    public void unsubscribe() {
        ObjectNode message = ControlJson.object("unsubscribe");
        message.put("stream_id", streamId);
        if (close("unsubscribed", "the router unsubscribed")) {
            session.send(message);
        }
    }

    /** A data stream for this ID arrived: true exactly once, while it is still commanded. */
    boolean open(Channel stream) {
        if (!state.compareAndSet(State.COMMANDED, State.OPEN)) {
            return false;
        }
        channel = stream;
        // A close that raced this open saw no channel yet: look again now that it is set.
        if (state.get() == State.CLOSED) {
            stream.close();
            return false;
        }
        stream.closeFuture().addListener(f -> session.forget(this));
        return true;
    }

    void handOver(Channel stream) {
        acceptor.opened(stream);
    }

    /** Ends the stream whatever its state; false when it had ended already. */
    boolean close(String code, String message) {
        State before = state.getAndSet(State.CLOSED);
        if (before == State.CLOSED) {
            return false;
        }
        session.forget(this);
        Channel open = channel;
        if (open != null) {
            open.close();
        }
        acceptor.closed(code, message);
        return true;
    }
}
