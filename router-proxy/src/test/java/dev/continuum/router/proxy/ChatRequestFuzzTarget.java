package dev.continuum.router.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

/**
 * Coverage-guided fuzzing of the chat-completions request parser, {@link RequestBodyInspector} (docs/testing.md,
 * "Fuzzing"): the fuzzer's bytes are a request body, seeded with SDK-shaped requests. The contract: every body is
 * read or refused with {@link RequestBodyInspector.InvalidBody} (the route's 400); nothing else is thrown (another
 * exception would be the route's 500); a body that is read names a non-empty model and leaves the buffer's indexes
 * where they were (it is forwarded as sent); the estimate is never negative.
 */
class ChatRequestFuzzTarget {
    @FuzzTest(maxDuration = "10s")
    void everyBodyIsReadOrRefused(byte[] input) {
        ByteBuf body = Unpooled.wrappedBuffer(input);
        try {
            ParsedRequest p = RequestBodyInspector.inspect(body, true, true);
            assertThat(p.model()).isNotEmpty();
            assertThat(p.estimatedPromptTokens()).isNotNegative();
        } catch (RequestBodyInspector.InvalidBody e) {
            assertThat(e.getMessage()).isNotEmpty();
        }
        assertThat(body.readerIndex()).isZero();
        assertThat(body.readableBytes()).isEqualTo(input.length);
    }
}
