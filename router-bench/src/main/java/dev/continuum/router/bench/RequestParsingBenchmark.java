package dev.continuum.router.bench;

import dev.continuum.router.proxy.RequestBodyInspection;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.infra.Blackhole;

/**
 * Request parsing and model extraction: the proxy's inspection of a chat-completion body (Jackson streaming
 * parser over the whole body; {@code model}, {@code stream} and {@code nvext} read, everything else
 * tokenized and skipped). The body is about 4 KiB with {@code model} after {@code messages}, so the
 * parser walks the conversation first. {@code heap}: an array-backed buffer (parsed in place);
 * {@code direct}: a pooled direct buffer, as Netty's aggregator usually hands the proxy (read through a
 * stream over a duplicate).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class RequestParsingBenchmark {
    @Param({"heap", "direct"})
    public String buffer = "heap"; // JMH assigns each @Param value before @Setup runs

    private ByteBuf body;

    @Setup
    public void setup() {
        byte[] bytes = ChatBodies.chatCompletion();
        body = "heap".equals(buffer) ? Unpooled.wrappedBuffer(bytes)
                : PooledByteBufAllocator.DEFAULT.directBuffer(bytes.length).writeBytes(bytes);
        if (!ChatBodies.MODEL.equals(RequestBodyInspection.model(body)) || body.readerIndex() != 0) {
            throw new IllegalStateException("unexpected inspection result");
        }
    }

    @TearDown
    public void tearDown() {
        body.release();
    }

    /** As for a request no dispatch hook sees. */
    @Benchmark
    public void inspectChatCompletion(Blackhole bh) {
        bh.consume(RequestBodyInspection.model(body));
    }

    /** As for a chat completion the dispatch hook plans: the same single pass plus the prompt-token walk. */
    @Benchmark
    public void inspectWithPromptEstimate(Blackhole bh) {
        bh.consume(RequestBodyInspection.estimatedPromptTokens(body));
    }
}
