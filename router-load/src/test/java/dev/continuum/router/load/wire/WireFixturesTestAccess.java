package dev.continuum.router.load.wire;

/** Lets tests in other packages compare against the hand-built fixtures without copying them. */
public final class WireFixturesTestAccess {
    private WireFixturesTestAccess() {
    }

    public static String envelopeHex() {
        return WireFixturesTest.ENVELOPE;
    }
}
