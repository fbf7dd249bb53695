package dev.continuum.router.testing;

import io.netty.util.ResourceLeakDetector;
import io.netty.util.ResourceLeakDetectorFactory;
import java.util.ArrayList;
import java.util.List;

/**
 * Installs a Netty leak detector factory whose detectors record every leak report instead of only
 * logging it, so {@link NettyLeakDetectionExtension} can fail the test that leaked. Installed by
 * {@link LeakDetectionSessionListener} before any test class touches a buffer (Netty reads the
 * factory once, in static initializers).
 */
public final class LeakRecorder {
    private static final List<String> LEAKS = new ArrayList<>();
    private static volatile boolean installed;

    private LeakRecorder() {
    }

    public static synchronized void install() {
        if (installed) {
            return;
        }
        installed = true;
        ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.PARANOID);
        ResourceLeakDetectorFactory.setResourceLeakDetectorFactory(new RecordingFactory());
    }

    /** Returns and clears the leaks reported since the last call. */
    public static List<String> drain() {
        synchronized (LEAKS) {
            List<String> copy = List.copyOf(LEAKS);
            LEAKS.clear();
            return copy;
        }
    }

    static void record(String report) {
        synchronized (LEAKS) {
            LEAKS.add(report);
        }
    }

    private static final class RecordingFactory extends ResourceLeakDetectorFactory {
        @Override
        @SuppressWarnings("deprecation")
        public <T> ResourceLeakDetector<T> newResourceLeakDetector(Class<T> resource, int samplingInterval,
                                                                   long maxActive) {
            return new RecordingDetector<>(resource, samplingInterval);
        }
    }

    private static final class RecordingDetector<T> extends ResourceLeakDetector<T> {
        RecordingDetector(Class<T> resource, int samplingInterval) {
            super(resource, samplingInterval);
        }

        @Override
        protected void reportTracedLeak(String resourceType, String records) {
            record(resourceType + " leaked:" + records);
            super.reportTracedLeak(resourceType, records);
        }

        @Override
        protected void reportUntracedLeak(String resourceType) {
            record(resourceType + " leaked (untraced)");
            super.reportUntracedLeak(resourceType);
        }
    }
}
