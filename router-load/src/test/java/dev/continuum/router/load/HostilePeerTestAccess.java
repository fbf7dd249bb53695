package dev.continuum.router.load;

/** The hand-built ZMTP byte streams of {@link HostilePeerTest}, for the fuzz run. */
public final class HostilePeerTestAccess {
    private HostilePeerTestAccess() {
    }

    /** A PUB's greeting and READY followed by one multipart message of {@code parts}. */
    public static byte[] handshakeAndMessage(byte[][] parts) {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        out.writeBytes(HostilePeerTest.handshake());
        for (int i = 0; i < parts.length; i++) {
            int flags = i < parts.length - 1 ? 1 : 0;
            if (parts[i].length > 255) {
                out.write(flags | 2);
                out.writeBytes(java.nio.ByteBuffer.allocate(8).putLong(parts[i].length).array());
            } else {
                out.write(flags);
                out.write(parts[i].length);
            }
            out.writeBytes(parts[i]);
        }
        return out.toByteArray();
    }
}
