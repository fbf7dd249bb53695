package dev.continuum.router.eventplane.zmtp;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/** What a ZMTP 3.x publisher writes, built by hand from 23/ZMTP and 37/ZMTP. */
final class PeerBytes {
    private PeerBytes() {
    }

    static byte[] greeting(int major, int minor, String mechanism) {
        ByteBuffer b = ByteBuffer.allocate(64);
        b.put((byte) 0xFF).put(new byte[8]).put((byte) 0x7F).put((byte) major).put((byte) minor);
        byte[] m = mechanism.getBytes(StandardCharsets.US_ASCII);
        b.put(m).put(new byte[20 - m.length]).put((byte) 1).put(new byte[31]);
        return b.array();
    }

    static byte[] greeting() {
        return greeting(3, 1, "NULL");
    }

    /** A command frame; short or long size as the body needs. */
    static byte[] command(String name, byte[] data) {
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        body.write(name.length());
        body.writeBytes(name.getBytes(StandardCharsets.US_ASCII));
        body.writeBytes(data);
        return frame(0x04, body.toByteArray());
    }

    static byte[] property(String name, String value) {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        b.write(name.length());
        b.writeBytes(name.getBytes(StandardCharsets.US_ASCII));
        b.writeBytes(ByteBuffer.allocate(4).putInt(value.length()).array());
        b.writeBytes(value.getBytes(StandardCharsets.US_ASCII));
        return b.toByteArray();
    }

    static byte[] ready(String socketType) {
        return command("READY", property("Socket-Type", socketType));
    }

    /** A frame with {@code flags} (the LONG bit is added when the body needs it). */
    static byte[] frame(int flags, byte[] body) {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        if (body.length > 255) {
            b.write(flags | 0x02);
            b.writeBytes(ByteBuffer.allocate(8).putLong(body.length).array());
        } else {
            b.write(flags);
            b.write(body.length);
        }
        b.writeBytes(body);
        return b.toByteArray();
    }

    /** A multipart message: MORE on every part but the last. */
    static byte[] message(byte[]... parts) {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        for (int i = 0; i < parts.length; i++) {
            b.writeBytes(frame(i < parts.length - 1 ? 0x01 : 0x00, parts[i]));
        }
        return b.toByteArray();
    }

    static byte[] concat(byte[]... chunks) {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        for (byte[] c : chunks) {
            b.writeBytes(c);
        }
        return b.toByteArray();
    }

    /** The greeting and READY a well-behaved PUB sends. */
    static byte[] handshake() {
        return concat(greeting(), ready("PUB"));
    }

    /** Bytes from hex digits; spaces are ignored. */
    static byte[] hex(String text) {
        return java.util.HexFormat.of().parseHex(text.replaceAll("[\\s|]", ""));
    }
}
