package dev.continuum.router.bench;

import dev.continuum.router.proxy.ingress.anthropic.AnthropicConverter;
import dev.continuum.router.proxy.ingress.responses.ResponsesConverter;
import dev.continuum.router.proxy.IngressConverter;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.infra.Blackhole;

/**
 * The stream converters of the Anthropic Messages and Responses ingresses, per upstream event: one whole stream
 * as the simulator's upstream sends it in {@code bench/ingress.sh} (16 text chunks, a finish chunk, a usage chunk,
 * {@code [DONE]}: {@value #EVENTS} events) through a fresh converter into one output buffer, as the relay gathers
 * the events of one upstream read (the simulator's events arrive together). Reported per event ({@link OperationsPerInvocation}); {@code -prof gc} gives the bytes allocated
 * per event, the figure docs/benchmarks.md records.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class StreamConvertBenchmark {
    static final int EVENTS = 19;
    private static final int TOKENS = 16;
    private static final int BATCH_BYTES = 4096;

    @Param({"messages", "responses"})
    public String wire = "messages"; // JMH assigns each @Param value before @Setup runs

    private final ByteBufAllocator alloc = PooledByteBufAllocator.DEFAULT;
    private IngressConverter converter;
    private ByteBuf[] events;

    @Setup
    public void setup() {
        converter = "messages".equals(wire) ? new AnthropicConverter() : new ResponsesConverter();
        events = new ByteBuf[EVENTS];
        String head = "{\"id\":\"cmpl-sim\",\"object\":\"chat.completion.chunk\",\"created\":0,\"model\":\"demo-model\",";
        for (int i = 0; i < TOKENS; i++) {
            events[i] = data(head + "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"tok \"},\"finish_reason\":null}]}");
        }
        events[TOKENS] = data(head + "\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}");
        events[TOKENS + 1] = data(head + "\"choices\":[],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":16,"
                + "\"total_tokens\":28}}");
        events[TOKENS + 2] = data("[DONE]");
    }

    private static ByteBuf data(String s) {
        return Unpooled.wrappedBuffer(s.getBytes(StandardCharsets.UTF_8));
    }

    @Benchmark
    @OperationsPerInvocation(EVENTS)
    public void stream(Blackhole bh) throws IngressConverter.InvalidResponse {
        IngressConverter.StreamConverter s = converter.newStream();
        ByteBuf out = alloc.buffer(BATCH_BYTES); // as the relay's batch for the events of one upstream read
        for (ByteBuf e : events) {
            s.event(e, out);
        }
        s.end(out);
        bh.consume(out.readableBytes());
        out.release();
    }
}
