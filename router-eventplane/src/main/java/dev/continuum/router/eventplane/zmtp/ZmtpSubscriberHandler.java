package dev.continuum.router.eventplane.zmtp;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Objects;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * The SUB side of ZMTP 3.x over one TCP connection: sends the greeting (version 3.0, NULL mechanism,
 * as-server 0), checks the peer's, exchanges READY (ours says {@code Socket-Type: SUB}, the peer's must
 * say PUB or XPUB), subscribes with the 3.0 single-frame form ({@code 0x01 + topic}, which 3.1 peers
 * accept too), then assembles multipart messages and answers PING with PONG. {@link #dealer} makes the same
 * handler a DEALER toward a ROUTER peer (an engine's KV-event replay socket) that sends one request instead.
 *
 * <p><b>Bounds before buffers.</b> Bytes are parsed as they arrive, with no cumulation buffer: frame
 * flags and sizes go into fields, and only frame bodies are copied, into one assembly array that starts
 * at {@link ZmtpLimits#INITIAL_BUFFER_BYTES} and doubles on demand. Every declared size (a 64-bit long
 * frame size included) is checked against {@link ZmtpLimits} before the array grows, so a peer cannot
 * make us allocate what it merely announces. After a message that needed a larger array, the array goes
 * back to its initial size, so an idle subscription holds {@link ZmtpLimits#INITIAL_BUFFER_BYTES}.
 *
 * <p><b>Buffers.</b> This handler releases every inbound {@link ByteBuf} it is given (it never forwards
 * one), and its writes (greeting, READY, subscription, PONG) are buffers it allocates and hands to the
 * transport, which releases them once written. It holds no {@link ByteBuf} between reads.
 *
 * <p>A protocol violation or bound breach calls {@link ZmtpListener#onRefused} once and closes the
 * channel; bytes after that are discarded. Not sharable: one instance per connection.
 */
public final class ZmtpSubscriberHandler extends ChannelInboundHandlerAdapter {
    private static final byte[] NULL_MECHANISM = "NULL".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] READY = "READY".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] PING = "PING".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] PONG = "PONG".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] ERROR = "ERROR".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] SOCKET_TYPE = "Socket-Type".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] SUB = "SUB".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] DEALER = "DEALER".getBytes(StandardCharsets.US_ASCII);
    /** ZMTP 3.1 (37/ZMTP): a PING's context is at most 16 bytes. */
    private static final int MAX_PING_CONTEXT = 16;

    private static final int FLAG_MORE = 0x01;
    private static final int FLAG_LONG = 0x02;
    private static final int FLAG_COMMAND = 0x04;
    private static final int RESERVED_FLAGS = 0xF8;

    private enum Phase { GREETING, FLAGS, SIZE, BODY, CLOSED }

    private final ZmtpLimits limits;
    private final byte[] topic;
    private final ZmtpListener listener;
    /** Null: a SUB socket. Otherwise a DEALER that sends these frames once, after READY (a replay request). */
    private final byte @Nullable [][] request;
    private final MessageView view = new MessageView();
    /** Part end offsets of the message being assembled. */
    private final int[] partEnds;

    private byte[] buffer = new byte[ZmtpLimits.INITIAL_BUFFER_BYTES];
    /** Bytes of the greeting, or of the message (all parts so far plus the current frame), in {@link #buffer}. */
    private int length;
    private Phase phase = Phase.GREETING;
    private boolean ready;
    private int parts;
    private int flags;
    private int sizeBytesLeft;
    private long size;
    private int frameStart;
    private long bodyLeft;
    private @Nullable ScheduledFuture<?> handshakeDeadline;

    /**
     * @param limits   the bounds of this subscription's family
     * @param topic    the subscription prefix (the bare topic, for example {@code kv_metrics})
     * @param listener told about the handshake, each message, and a refusal
     */
    public ZmtpSubscriberHandler(ZmtpLimits limits, byte[] topic, ZmtpListener listener) {
        this(limits, topic, listener, null);
    }

    private ZmtpSubscriberHandler(ZmtpLimits limits, byte[] topic, ZmtpListener listener,
                                  byte @Nullable [][] request) {
        this.limits = Objects.requireNonNull(limits, "limits");
        this.topic = topic.clone();
        this.listener = Objects.requireNonNull(listener, "listener");
        this.request = request;
        if (topic.length + 1 > limits.maxFrameBytes() || topic.length + 1 > 255) {
            throw new IllegalArgumentException("topic: " + topic.length + " bytes (expected: a short frame)");
        }
        this.partEnds = new int[limits.maxPartsPerMessage()];
    }

    /**
     * A DEALER connection to a ROUTER peer (an engine's KV-event replay socket) with the same bounds: after the
     * handshake it sends {@code request} as one multipart message (each frame at most 255 bytes), then reports every
     * message the peer sends back.
     */
    public static ZmtpSubscriberHandler dealer(ZmtpLimits limits, byte[][] request, ZmtpListener listener) {
        byte[][] frames = new byte[request.length][];
        for (int i = 0; i < request.length; i++) {
            if (request[i].length > 255) {
                throw new IllegalArgumentException("request frame: " + request[i].length + " bytes (expected: <= 255)");
            }
            frames[i] = request[i].clone();
        }
        if (frames.length == 0) {
            throw new IllegalArgumentException("request: no frames");
        }
        return new ZmtpSubscriberHandler(limits, new byte[0], listener, frames);
    }

    /** Bytes this connection holds in its assembly array: {@link ZmtpLimits#INITIAL_BUFFER_BYTES} when idle. */
    public int retainedBufferBytes() {
        return buffer.length;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
        handshakeDeadline = ctx.executor().schedule(() -> refuse(ctx, "handshake timeout"),
                limits.handshakeTimeout().toNanos(), TimeUnit.NANOSECONDS);
        ByteBuf greeting = ctx.alloc().buffer(ZmtpLimits.GREETING_BYTES, ZmtpLimits.GREETING_BYTES);
        greeting.writeByte(0xFF).writeZero(8).writeByte(0x7F); // signature (padding is ignored by peers)
        greeting.writeByte(3).writeByte(0); // we speak 3.0; a 3.1 peer downgrades to it
        greeting.writeBytes(NULL_MECHANISM).writeZero(20 - NULL_MECHANISM.length);
        greeting.writeByte(0); // as-server: we are the client
        greeting.writeZero(31);
        ctx.writeAndFlush(greeting, ctx.voidPromise());
        super.channelActive(ctx);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        close();
        super.channelInactive(ctx);
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        close();
    }

    private void close() {
        phase = Phase.CLOSED;
        cancelDeadline();
        if (buffer.length > ZmtpLimits.INITIAL_BUFFER_BYTES) {
            buffer = new byte[ZmtpLimits.INITIAL_BUFFER_BYTES]; // a refused peer's partial message is not kept
        }
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof ByteBuf in)) {
            io.netty.util.ReferenceCountUtil.release(msg);
            return;
        }
        try {
            while (in.isReadable() && phase != Phase.CLOSED) {
                switch (phase) {
                    case GREETING -> readGreeting(ctx, in);
                    case FLAGS -> readFlags(ctx, in.readUnsignedByte());
                    case SIZE -> readSize(ctx, in);
                    case BODY -> readBody(ctx, in);
                    default -> throw new IllegalStateException(phase.name());
                }
            }
        } finally {
            in.release();
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        // An I/O error (reset, unreachable): a plain disconnect, not a refusal. The channel's close tells the owner.
        ctx.close();
    }

    private void readGreeting(ChannelHandlerContext ctx, ByteBuf in) {
        int n = Math.min(ZmtpLimits.GREETING_BYTES - length, in.readableBytes());
        int from = length;
        in.readBytes(buffer, length, n);
        length += n;
        // Checked as soon as each byte is here, so a wrong peer is refused without waiting for 64 bytes.
        if (from == 0 && (buffer[0] & 0xFF) != 0xFF) {
            refuse(ctx, "greeting signature");
            return;
        }
        if (from <= 9 && length > 9 && buffer[9] != 0x7F) {
            refuse(ctx, "greeting signature");
            return;
        }
        if (from <= 10 && length > 10 && (buffer[10] & 0xFF) < 3) {
            refuse(ctx, "greeting version " + (buffer[10] & 0xFF) + " (expected: ZMTP 3.x)");
            return;
        }
        if (length < ZmtpLimits.GREETING_BYTES) {
            return;
        }
        // Mechanism: "NULL" padded with zero bytes to 20.
        for (int i = 0; i < 20; i++) {
            byte expected = i < NULL_MECHANISM.length ? NULL_MECHANISM[i] : 0;
            if (buffer[12 + i] != expected) {
                refuse(ctx, "greeting mechanism (expected: NULL)");
                return;
            }
        }
        length = 0;
        phase = Phase.FLAGS;
        writeCommand(ctx, READY, SOCKET_TYPE, request == null ? SUB : DEALER);
    }

    private void readFlags(ChannelHandlerContext ctx, int value) {
        if ((value & RESERVED_FLAGS) != 0) {
            refuse(ctx, "frame flags 0x" + Integer.toHexString(value));
            return;
        }
        if ((value & FLAG_COMMAND) != 0 && (value & FLAG_MORE) != 0) {
            refuse(ctx, "command frame with MORE");
            return;
        }
        flags = value;
        size = 0;
        sizeBytesLeft = (value & FLAG_LONG) != 0 ? 8 : 1;
        phase = Phase.SIZE;
    }

    private void readSize(ChannelHandlerContext ctx, ByteBuf in) {
        while (sizeBytesLeft > 0 && in.isReadable()) {
            size = (size << 8) | in.readUnsignedByte();
            sizeBytesLeft--;
        }
        if (sizeBytesLeft > 0) {
            return;
        }
        // A long size is an unsigned 64-bit value: the top bit set reads as negative here and is refused
        // with every other size above a bound, before anything is sized from it.
        boolean command = (flags & FLAG_COMMAND) != 0;
        if (command) {
            if (size < 0 || size > limits.maxCommandBytes()) {
                refuse(ctx, "command size " + Long.toUnsignedString(size) + " (expected: <= "
                        + limits.maxCommandBytes() + ")");
                return;
            }
        } else {
            if (!ready) {
                refuse(ctx, "message frame before READY");
                return;
            }
            if (size < 0 || size > limits.maxFrameBytes()) {
                refuse(ctx, "frame size " + Long.toUnsignedString(size) + " (expected: <= "
                        + limits.maxFrameBytes() + ")");
                return;
            }
            if (parts >= limits.maxPartsPerMessage()) {
                refuse(ctx, "parts per message (expected: <= " + limits.maxPartsPerMessage() + ")");
                return;
            }
            if (length + size > limits.maxMessageBytes()) {
                refuse(ctx, "message bytes (expected: <= " + limits.maxMessageBytes() + ")");
                return;
            }
        }
        // Never overflows: size is at most maxCommandBytes or maxFrameBytes, and length + size is at most
        // maxMessageBytes (commands sit after the parts so far, bounded the same way below).
        int frameSize = (int) size;
        if (command && length + frameSize > limits.maxMessageBytes()) {
            refuse(ctx, "message bytes (expected: <= " + limits.maxMessageBytes() + ")");
            return;
        }
        ensureCapacity(length + frameSize);
        frameStart = length;
        bodyLeft = frameSize;
        phase = Phase.BODY;
        if (frameSize == 0) {
            frameComplete(ctx);
        }
    }

    private void readBody(ChannelHandlerContext ctx, ByteBuf in) {
        // Never overflows: bodyLeft is at most a frame size, an int.
        int n = (int) Math.min(bodyLeft, in.readableBytes());
        in.readBytes(buffer, length, n);
        length += n;
        bodyLeft -= n;
        if (bodyLeft == 0) {
            frameComplete(ctx);
        }
    }

    private void frameComplete(ChannelHandlerContext ctx) {
        phase = Phase.FLAGS;
        if ((flags & FLAG_COMMAND) != 0) {
            int start = frameStart;
            int end = length;
            length = start; // the command's bytes are not part of any message
            command(ctx, start, end);
            return;
        }
        partEnds[parts++] = length;
        if ((flags & FLAG_MORE) != 0) {
            return;
        }
        try {
            listener.onMessage(view);
        } finally {
            parts = 0;
            length = 0;
            if (buffer.length > ZmtpLimits.INITIAL_BUFFER_BYTES) {
                // Back to the idle size: a burst of large messages must not pin its largest array forever.
                buffer = new byte[ZmtpLimits.INITIAL_BUFFER_BYTES];
            }
        }
    }

    private void command(ChannelHandlerContext ctx, int start, int end) {
        if (end - start < 1) {
            refuse(ctx, "empty command");
            return;
        }
        int nameLength = buffer[start] & 0xFF;
        int dataStart = start + 1 + nameLength;
        if (dataStart > end) {
            refuse(ctx, "command name length");
            return;
        }
        if (nameIs(start, nameLength, READY)) {
            if (ready) {
                refuse(ctx, "second READY");
                return;
            }
            ready(ctx, dataStart, end);
        } else if (nameIs(start, nameLength, ERROR)) {
            refuse(ctx, "peer sent ERROR");
        } else if (!ready) {
            refuse(ctx, "command before READY");
        } else if (nameIs(start, nameLength, PING)) {
            ping(ctx, dataStart, end);
        }
        // PONG and commands of later protocol versions are ignored: they are bounded and carry nothing for us.
    }

    private boolean nameIs(int start, int nameLength, byte[] name) {
        return nameLength == name.length
                && Arrays.equals(buffer, start + 1, start + 1 + nameLength, name, 0, name.length);
    }

    private void ready(ChannelHandlerContext ctx, int start, int end) {
        int pos = start;
        int properties = 0;
        boolean publisher = false;
        while (pos < end) {
            if (++properties > limits.maxMetadataProperties()) {
                refuse(ctx, "metadata properties (expected: <= " + limits.maxMetadataProperties() + ")");
                return;
            }
            int nameLength = buffer[pos] & 0xFF;
            int nameStart = pos + 1;
            int valueLengthAt = nameStart + nameLength;
            if (valueLengthAt + 4 > end) {
                refuse(ctx, "metadata property");
                return;
            }
            long valueLength = ((buffer[valueLengthAt] & 0xFFL) << 24) | ((buffer[valueLengthAt + 1] & 0xFF) << 16)
                    | ((buffer[valueLengthAt + 2] & 0xFF) << 8) | (buffer[valueLengthAt + 3] & 0xFF);
            int valueStart = valueLengthAt + 4;
            if (valueLength > end - valueStart) {
                refuse(ctx, "metadata value length");
                return;
            }
            int valueEnd = valueStart + (int) valueLength;
            if (equalsIgnoreCase(nameStart, nameLength, SOCKET_TYPE)) {
                String type = new String(buffer, valueStart, valueEnd - valueStart, StandardCharsets.US_ASCII);
                publisher = request == null ? type.equals("PUB") || type.equals("XPUB") : type.equals("ROUTER");
                if (!publisher) {
                    refuse(ctx, request == null ? "peer socket type (expected: PUB or XPUB)"
                            : "peer socket type (expected: ROUTER)");
                    return;
                }
            }
            pos = valueEnd;
        }
        if (!publisher) {
            refuse(ctx, "READY without Socket-Type");
            return;
        }
        ready = true;
        cancelDeadline();
        byte[][] frames = request;
        if (frames != null) {
            int total = 0;
            for (byte[] f : frames) {
                total += 2 + f.length;
            }
            ByteBuf out = ctx.alloc().buffer(total);
            for (int i = 0; i < frames.length; i++) {
                out.writeByte(i + 1 < frames.length ? FLAG_MORE : 0).writeByte(frames[i].length).writeBytes(frames[i]);
            }
            ctx.writeAndFlush(out, ctx.voidPromise());
            listener.onConnected();
            return;
        }
        // ZMTP 3.0 subscription: a message frame whose first byte is 1, followed by the prefix.
        ByteBuf subscribe = ctx.alloc().buffer(2 + 1 + topic.length);
        subscribe.writeByte(0).writeByte(1 + topic.length).writeByte(1).writeBytes(topic);
        ctx.writeAndFlush(subscribe, ctx.voidPromise());
        listener.onConnected();
    }

    private boolean equalsIgnoreCase(int start, int len, byte[] ascii) {
        if (len != ascii.length) {
            return false;
        }
        for (int i = 0; i < len; i++) {
            if (Character.toLowerCase(buffer[start + i]) != Character.toLowerCase(ascii[i])) {
                return false;
            }
        }
        return true;
    }

    private void ping(ChannelHandlerContext ctx, int start, int end) {
        int contextLength = end - start - 2; // a 2-byte TTL, then the context
        if (contextLength < 0 || contextLength > MAX_PING_CONTEXT) {
            refuse(ctx, "PING body");
            return;
        }
        // A peer that pings but never reads must not grow our outbound queue: skip the PONG while it is full.
        if (!ctx.channel().isWritable()) {
            return;
        }
        int bodyLength = 1 + PONG.length + contextLength;
        ByteBuf pong = ctx.alloc().buffer(2 + bodyLength);
        pong.writeByte(FLAG_COMMAND).writeByte(bodyLength).writeByte(PONG.length).writeBytes(PONG)
                .writeBytes(buffer, start + 2, contextLength);
        ctx.writeAndFlush(pong, ctx.voidPromise());
    }

    private void writeCommand(ChannelHandlerContext ctx, byte[] name, byte[] property, byte[] value) {
        int bodyLength = 1 + name.length + 1 + property.length + 4 + value.length;
        ByteBuf frame = ctx.alloc().buffer(2 + bodyLength);
        frame.writeByte(FLAG_COMMAND).writeByte(bodyLength)
                .writeByte(name.length).writeBytes(name)
                .writeByte(property.length).writeBytes(property)
                .writeInt(value.length).writeBytes(value);
        ctx.writeAndFlush(frame, ctx.voidPromise());
    }

    private void ensureCapacity(int needed) {
        if (needed <= buffer.length) {
            return;
        }
        // Powers of two up to the message bound; needed <= maxMessageBytes was checked by the caller.
        int capacity = buffer.length;
        while (capacity < needed) {
            capacity = capacity << 1;
        }
        buffer = Arrays.copyOf(buffer, Math.min(capacity, limits.maxMessageBytes()));
    }

    private void refuse(ChannelHandlerContext ctx, String reason) {
        if (phase == Phase.CLOSED) {
            return;
        }
        close();
        try {
            listener.onRefused(reason);
        } finally {
            ctx.close();
        }
    }

    private void cancelDeadline() {
        ScheduledFuture<?> deadline = handshakeDeadline;
        if (deadline != null) {
            deadline.cancel(false);
            handshakeDeadline = null;
        }
    }

    private final class MessageView implements ZmtpMessage {
        @Override
        public int parts() {
            return parts;
        }

        @Override
        public byte[] array() {
            return buffer;
        }

        @Override
        public int offset(int part) {
            Objects.checkIndex(part, parts);
            return part == 0 ? 0 : partEnds[part - 1];
        }

        @Override
        public int length(int part) {
            return partEnds[part] - offset(part);
        }
    }
}
