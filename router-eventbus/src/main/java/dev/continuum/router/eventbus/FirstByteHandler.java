package dev.continuum.router.eventbus;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.function.Supplier;

/**
 * Looks at the first byte of a connection before TLS sees it. A TLS handshake record (0x16) gets the TLS
 * pipeline, and the buffered bytes go on to it untouched. Anything else is {@code tls_required}: a plaintext
 * HTTP/1.1 403 with the JSON error when the byte is an ASCII letter (someone typed http://), a bare close
 * otherwise. Releases what it discards; forwards (on removal) what it keeps.
 */
final class FirstByteHandler extends ByteToMessageDecoder {
    private static final byte TLS_HANDSHAKE = 0x16;
    private static final byte[] PLAINTEXT_REFUSAL = plaintextRefusal();

    private final Supplier<TlsPipeline> tls;
    private final BusMetrics metrics;

    /** Installs the TLS handlers after this one. */
    interface TlsPipeline {
        void install(ChannelHandlerContext ctx);
    }

    FirstByteHandler(Supplier<TlsPipeline> tls, BusMetrics metrics) {
        this.tls = tls;
        this.metrics = metrics;
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        if (!in.isReadable()) {
            return;
        }
        byte first = in.getByte(in.readerIndex());
        if (first == TLS_HANDSHAKE) {
            tls.get().install(ctx);
            ctx.pipeline().remove(this);
            return;
        }
        in.skipBytes(in.readableBytes());
        metrics.refused(BusErrorCode.TLS_REQUIRED);
        if ((first >= 'A' && first <= 'Z') || (first >= 'a' && first <= 'z')) {
            ctx.writeAndFlush(Unpooled.wrappedBuffer(PLAINTEXT_REFUSAL)).addListener(ChannelFutureListener.CLOSE);
        } else {
            ctx.close();
        }
        ctx.channel().config().setAutoRead(false);
    }

    private static byte[] plaintextRefusal() {
        String body = ControlJson.errorText(BusErrorCode.TLS_REQUIRED,
                "this port speaks HTTP/2 over TLS 1.3 only");
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        String head = "HTTP/1.1 403 Forbidden\r\ncontent-type: application/json\r\ncontent-length: " + bytes.length
                + "\r\nconnection: close\r\n\r\n";
        return (head + body).getBytes(StandardCharsets.UTF_8);
    }
}
