package dev.continuum.router.eventbus;

import io.netty.buffer.ByteBuf;
import java.nio.charset.StandardCharsets;
import org.jspecify.annotations.Nullable;

/**
 * An incremental, bounded parser of an SSE body (the WHATWG "event stream" format: {@code id}, {@code event},
 * {@code data} fields, {@code :} comments, a blank line ends an event; LF, CRLF or CR end a line). The bytes of
 * one event, all its lines together, never exceed {@code maxEventBytes}: a longer event is skipped to its end
 * and reported as {@link Listener#oversized()}, and the stream goes on. One parser per stream, one thread.
 *
 * <p>Not router-core's {@code SseEvents}: that one is the proxy's zero-copy splitter on every streamed token,
 * keeps only {@code data} and fails the response on an oversized event; a KV-event stream needs each event's
 * {@code id} (its resume point) and must outlive one bad event.
 */
public final class SseParser {
    /** What the parser found. */
    public interface Listener {
        /** A complete event with data; {@code id} is this event's own {@code id} field, or null. */
        void event(@Nullable String id, String type, String data);

        /** An event longer than the bound was skipped. */
        void oversized();
    }

    private final int maxEventBytes;
    private final Listener listener;
    private final byte[] line;
    private int lineLength;
    private int eventBytes;
    private boolean skipping;
    private boolean afterCr;
    private boolean lineSeen; // the current line had a byte (kept or skipped): it is not the blank one
    private @Nullable String id;
    private String type = "message";
    private final StringBuilder data = new StringBuilder();
    private boolean hasData;

    public SseParser(int maxEventBytes, Listener listener) {
        this.maxEventBytes = maxEventBytes;
        this.listener = listener;
        this.line = new byte[maxEventBytes];
    }

    /** Consumes every readable byte of {@code bytes} (the caller still releases it). */
    public void feed(ByteBuf bytes) {
        int end = bytes.writerIndex();
        for (int i = bytes.readerIndex(); i < end; i++) {
            byte b = bytes.getByte(i);
            if (b == '\n' && afterCr) {
                afterCr = false; // the LF of a CRLF
                continue;
            }
            afterCr = b == '\r';
            if (b == '\n' || b == '\r') {
                endOfLine();
            } else {
                lineSeen = true;
                if (skipping) {
                    continue;
                }
                if (eventBytes >= maxEventBytes) {
                    skipping = true;
                } else {
                    line[lineLength++] = b;
                    eventBytes++;
                }
            }
        }
        bytes.readerIndex(end);
    }

    private void endOfLine() {
        boolean blank = !lineSeen;
        lineSeen = false;
        if (skipping) {
            if (blank) { // the blank line that ends the oversized event
                listener.oversized();
                reset();
            }
            lineLength = 0;
            return;
        }
        if (blank) {
            dispatch();
            return;
        }
        field();
        lineLength = 0;
    }

    private void field() {
        if (line[0] == ':') {
            return; // a comment
        }
        int colon = -1;
        for (int i = 0; i < lineLength; i++) {
            if (line[i] == ':') {
                colon = i;
                break;
            }
        }
        String name = new String(line, 0, colon < 0 ? lineLength : colon, StandardCharsets.UTF_8);
        String value = "";
        if (colon >= 0) {
            int from = colon + 1 < lineLength && line[colon + 1] == ' ' ? colon + 2 : colon + 1;
            value = new String(line, from, lineLength - from, StandardCharsets.UTF_8);
        }
        switch (name) {
            case "data" -> {
                if (hasData) {
                    data.append('\n');
                }
                data.append(value);
                hasData = true;
            }
            case "id" -> {
                if (value.indexOf('\0') < 0) {
                    id = value;
                }
            }
            case "event" -> type = value;
            default -> {
                // retry and unknown fields: ignored, as the format says
            }
        }
    }

    private void dispatch() {
        if (hasData) {
            listener.event(id, type, data.toString());
        }
        reset();
    }

    private void reset() {
        id = null;
        type = "message";
        data.setLength(0);
        hasData = false;
        eventBytes = 0;
        skipping = false;
        lineLength = 0;
    }
}
