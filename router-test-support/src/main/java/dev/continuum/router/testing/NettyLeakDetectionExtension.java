package dev.continuum.router.testing;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Fails a test when Netty reported a leaked buffer while it ran. Auto-registered for every test
 * (see {@code junit-platform.properties}). Leak reports arrive when a leaked buffer is garbage
 * collected and the detector next runs, so this forces a few GC rounds and allocations first.
 */
public final class NettyLeakDetectionExtension implements AfterEachCallback {
    @Override
    public void afterEach(ExtensionContext context) {
        List<String> leaks = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            System.gc();
            // Tracked allocations make the detector poll its reference queue and report.
            for (int j = 0; j < 8; j++) {
                io.netty.buffer.ByteBuf probe = io.netty.buffer.PooledByteBufAllocator.DEFAULT.buffer(1);
                probe.release();
                io.netty.buffer.ByteBuf unpooled = io.netty.buffer.UnpooledByteBufAllocator.DEFAULT.buffer(1);
                unpooled.release();
            }
            leaks.addAll(LeakRecorder.drain());
        }
        if (!leaks.isEmpty()) {
            throw new AssertionError("Netty reported " + leaks.size() + " leaked buffer(s) in "
                    + context.getDisplayName() + ":\n" + String.join("\n", leaks));
        }
    }
}
