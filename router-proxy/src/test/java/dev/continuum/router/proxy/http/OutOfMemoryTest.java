package dev.continuum.router.proxy.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.handler.codec.DecoderException;
import java.io.IOException;
import org.junit.jupiter.api.Test;

class OutOfMemoryTest {
    @Test
    void findsAnAllocationFailureWrappedByADecoder() {
        assertThat(OutOfMemory.in(new DecoderException(new OutOfMemoryError("Direct buffer memory")))).isTrue();
        assertThat(OutOfMemory.in(new OutOfMemoryError("Java heap space"))).isTrue();
    }

    @Test
    void ignoresOtherFailures() {
        assertThat(OutOfMemory.in(new IOException("Connection reset by peer"))).isFalse();
        assertThat(OutOfMemory.in(new DecoderException(new IllegalStateException()))).isFalse();
    }
}
