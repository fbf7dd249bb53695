package dev.continuum.router.testing;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.util.ResourceLeakDetector;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class LeakRecorderTest {
    @Test
    void runsEveryTestUnderParanoidDetection() {
        assertThat(ResourceLeakDetector.getLevel()).isEqualTo(ResourceLeakDetector.Level.PARANOID);
    }

    @Test
    void recordsABufferThatWasNeverReleased() {
        leakOne();
        List<String> leaks = new ArrayList<>();
        // The report comes when the buffer is collected and the detector next polls: allocate until then.
        for (int round = 0; round < 50 && leaks.isEmpty(); round++) {
            System.gc();
            for (int i = 0; i < 16; i++) {
                PooledByteBufAllocator.DEFAULT.buffer(8).release();
            }
            leaks.addAll(LeakRecorder.drain());
        }
        // Drained here, so the extension's after-test check sees nothing and the test passes.
        assertThat(leaks).isNotEmpty();
        assertThat(leaks.get(0)).contains("ByteBuf");
    }

    private static void leakOne() {
        ByteBuf leaked = PooledByteBufAllocator.DEFAULT.buffer(64);
        leaked.writeLong(42);
    }
}
