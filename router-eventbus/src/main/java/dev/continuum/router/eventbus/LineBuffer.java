package dev.continuum.router.eventbus;

import io.netty.buffer.ByteBuf;
import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.List;

/**
 * Splits a control stream's bytes into lines, never holding more than {@link ControlJson#MAX_LINE_BYTES}: a
 * longer line is refused before more of it is kept. Reads the buffer it is given; the caller releases it.
 * One event loop uses an instance.
 */
public final class LineBuffer {
    /** The line in progress grew past the limit. */
    public static final class TooLong extends Exception {
        private static final long serialVersionUID = 1L;

        TooLong() {
            super("a control line longer than " + ControlJson.MAX_LINE_BYTES + " bytes", null, false, false);
        }
    }

    private final ByteArrayOutputStream partial = new ByteArrayOutputStream();

    public List<byte[]> feed(ByteBuf data) throws TooLong {
        List<byte[]> lines = new ArrayList<>(1);
        while (data.isReadable()) {
            int newline = data.indexOf(data.readerIndex(), data.writerIndex(), (byte) '\n');
            int end = newline < 0 ? data.writerIndex() : newline;
            int length = end - data.readerIndex();
            // The newline counts toward the limit, so a line of exactly the limit ends with it.
            if ((long) partial.size() + length + (newline < 0 ? 0 : 1) > ControlJson.MAX_LINE_BYTES) {
                throw new TooLong();
            }
            byte[] chunk = new byte[length];
            data.readBytes(chunk);
            partial.writeBytes(chunk);
            if (newline < 0) {
                break;
            }
            data.skipBytes(1);
            byte[] line = partial.toByteArray();
            partial.reset();
            int n = line.length;
            if (n > 0 && line[n - 1] == '\r') {
                line = java.util.Arrays.copyOf(line, n - 1);
            }
            lines.add(line);
        }
        return lines;
    }

    public boolean hasPartial() {
        return partial.size() > 0;
    }
}
