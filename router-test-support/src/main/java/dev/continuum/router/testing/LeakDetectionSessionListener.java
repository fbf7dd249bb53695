package dev.continuum.router.testing;

import org.junit.platform.launcher.LauncherSession;
import org.junit.platform.launcher.LauncherSessionListener;

/** Registered through {@code META-INF/services}: installs the recording leak detector first thing. */
public final class LeakDetectionSessionListener implements LauncherSessionListener {
    @Override
    public void launcherSessionOpened(LauncherSession session) {
        LeakRecorder.install();
    }
}
