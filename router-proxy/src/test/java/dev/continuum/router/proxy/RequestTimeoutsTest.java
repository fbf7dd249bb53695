package dev.continuum.router.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.channel.ChannelPromise;
import io.netty.channel.ConnectTimeoutException;
import io.netty.channel.embedded.EmbeddedChannel;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * {@code timeouts.connection} as {@link RequestTimeouts#boundConnect} applies it, on virtual time: the bound fails a
 * connect still pending when it passes (and closes its channel), and goes away with a connect that completed.
 * A connect that hangs cannot be made reliably on loopback, so the pending connect is a promise of Netty's
 * embedded channel; the other timeouts are shown through the real server in DropInProxyTest.
 */
class RequestTimeoutsTest {
    private final VirtualTimer timer = new VirtualTimer();

    @Test
    void aConnectStillPendingWhenTheBoundPassesFailsAndItsChannelCloses() {
        EmbeddedChannel ch = new EmbeddedChannel();
        ChannelPromise connect = ch.newPromise();

        RequestTimeouts.boundConnect(timer, ch.eventLoop(), connect, Duration.ofSeconds(2));
        assertThat(timer.nextDue()).hasValue(Duration.ofSeconds(2));
        timer.advance(Duration.ofMillis(1_999));
        ch.runPendingTasks();
        assertThat(connect.isDone()).isFalse();

        timer.advance(Duration.ofMillis(1));
        ch.runPendingTasks();

        assertThat(connect.cause()).isInstanceOf(ConnectTimeoutException.class).hasMessageContaining("2000 ms");
        assertThat(ch.isOpen()).isFalse();
    }

    @Test
    void aConnectThatCompletedCancelsItsBound() {
        EmbeddedChannel ch = new EmbeddedChannel();
        ChannelPromise connect = ch.newPromise();
        RequestTimeouts.boundConnect(timer, ch.eventLoop(), connect, Duration.ofSeconds(2));

        connect.setSuccess();
        timer.advance(Duration.ofSeconds(5));
        ch.runPendingTasks();

        assertThat(timer.pending()).isZero();
        assertThat(connect.isSuccess()).isTrue();
        assertThat(ch.isOpen()).isTrue();
        ch.finishAndReleaseAll();
    }
}
