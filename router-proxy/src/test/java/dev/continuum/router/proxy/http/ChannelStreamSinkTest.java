package dev.continuum.router.proxy.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelFuture;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.LastHttpContent;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The streamed-body sink's bounds on a real (embedded) Netty channel: at most two chunks wait for the event loop,
 * none is taken while the channel is unwritable, and the end runs its callbacks and the request's completion once.
 */
class ChannelStreamSinkTest {
    private final EmbeddedChannel ch = new EmbeddedChannel();
    private final List<ChannelFuture> finished = new ArrayList<>();
    private final ChannelStreamSink sink = new ChannelStreamSink(ch, finished::add);

    private static byte[] chunk(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    @Test
    void atMostTwoChunksWaitAndNoneWhileUnwritable() {
        assertThat(sink.offer(chunk("a"))).isTrue();
        assertThat(sink.offer(chunk("b"))).isTrue();
        assertThat(sink.offer(chunk("c"))).as("a third chunk while two wait").isFalse();
        ch.runPendingTasks();
        assertThat(read()).containsExactly("a", "b");
        ch.unsafe().outboundBuffer().setUserDefinedWritability(1, false);
        for (int i = 0; i < 5; i++) {
            assertThat(sink.offer(chunk("x"))).as("offered while unwritable").isFalse();
        }
        ch.unsafe().outboundBuffer().setUserDefinedWritability(1, true);
        assertThat(sink.offer(chunk("d"))).isTrue();
        assertThat(sink.offer(chunk("e"))).as("the refused chunks left no count behind").isTrue();
        ch.runPendingTasks();
        assertThat(read()).containsExactly("d", "e");
    }

    @Test
    void endWritesTheLastChunkAndRunsCallbacksOnce() {
        AtomicInteger ended = new AtomicInteger();
        sink.whenEnded(ended::incrementAndGet);
        sink.end();
        sink.end();
        assertThat(ended).hasValue(1);
        assertThat(finished).hasSize(1);
        assertThat((Object) ch.readOutbound()).isInstanceOf(LastHttpContent.class);
        assertThat(sink.open()).isFalse();
        assertThat(sink.offer(chunk("late"))).isFalse();
        sink.whenEnded(ended::incrementAndGet);
        assertThat(ended).as("a callback added after the end runs at once").hasValue(2);
    }

    @Test
    void aClientCloseEndsTheStreamWithoutWriting() {
        AtomicInteger ended = new AtomicInteger();
        sink.whenEnded(ended::incrementAndGet);
        assertThat(sink.offer(chunk("queued"))).isTrue();
        sink.clientClosed();
        ch.runPendingTasks();
        assertThat(ended).hasValue(1);
        assertThat(finished).as("the handler records the 499 itself").isEmpty();
        assertThat((Object) ch.readOutbound()).as("a chunk queued before the close is not written").isNull();
        sink.end();
        assertThat(finished).isEmpty();
    }

    private List<String> read() {
        List<String> out = new ArrayList<>();
        HttpContent c;
        while ((c = ch.readOutbound()) != null) {
            ByteBuf b = c.content();
            out.add(b.toString(StandardCharsets.US_ASCII));
            c.release();
        }
        return out;
    }
}
