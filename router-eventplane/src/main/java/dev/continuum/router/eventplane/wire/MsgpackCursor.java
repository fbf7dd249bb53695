package dev.continuum.router.eventplane.wire;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.msgpack.core.MessageFormat;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessagePackException;
import org.msgpack.core.MessageUnpacker;
import org.msgpack.core.buffer.ArrayBufferInput;
import org.msgpack.value.ValueType;

/**
 * Bounded reads over one msgpack value held in a byte array. Every declared length is checked against the
 * bytes actually left before anything is read or allocated, so a header that claims 4 GiB costs nothing.
 * msgpack-core's own failures (truncation, wrong type, overflow) become {@link EventDrop#MALFORMED}.
 *
 * <p><b>Allocation.</b> A cursor is reused through {@link #reset} (the decoders keep one per thread), so a
 * message does not pay for a new {@link MessageUnpacker}; keys and expected strings are compared in place
 * with {@link #stringIndex} rather than copied out. Not thread-safe.
 */
public final class MsgpackCursor {
    /** Maps and arrays of ours have at most six fields; extra unknown keys are skipped, within this bound. */
    public static final int MAX_CONTAINER_ENTRIES = 64;
    /** Keys, topics and enum strings are short. */
    public static final int MAX_STRING_BYTES = 256;

    private static final byte[] EMPTY = new byte[0];

    private byte[] array;
    private int offset;
    private int length;
    private final ArrayBufferInput input;
    private final MessageUnpacker unpacker;

    public MsgpackCursor(byte[] array, int offset, int length) {
        this.array = array;
        this.offset = offset;
        this.length = length;
        this.input = new ArrayBufferInput(array, offset, length);
        this.unpacker = MessagePack.DEFAULT_UNPACKER_CONFIG.newUnpacker(input);
    }

    /** An empty cursor, for {@link #reset}. */
    public MsgpackCursor() {
        this(EMPTY, 0, 0);
    }

    /** Points this cursor at a new value: {@code length} bytes of {@code array} from {@code offset}. */
    public MsgpackCursor reset(byte[] newArray, int newOffset, int newLength) {
        this.array = newArray;
        this.offset = newOffset;
        this.length = newLength;
        input.reset(newArray, newOffset, newLength);
        try {
            unpacker.reset(input);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e); // never: an array input does not do I/O
        }
        return this;
    }

    private int position() {
        // Never overflows: at most length, an int.
        return (int) unpacker.getTotalReadBytes();
    }

    public int remaining() {
        return length - position();
    }

    public ValueType nextType() throws WireException {
        try {
            if (!unpacker.hasNext()) {
                throw WireException.malformed("truncated msgpack");
            }
            return unpacker.getNextFormat().getValueType();
        } catch (IOException | MessagePackException e) {
            throw WireException.malformed("msgpack format");
        }
    }

    public boolean tryNil() throws WireException {
        try {
            return unpacker.tryUnpackNil();
        } catch (IOException | MessagePackException e) {
            throw WireException.malformed("msgpack nil");
        }
    }

    /** A map's entry count (checked against the bound and the bytes left: each entry takes at least 2). */
    public int mapHeader() throws WireException {
        try {
            int n = unpacker.unpackMapHeader();
            return checkEntries(n, 2);
        } catch (IOException | MessagePackException e) {
            throw WireException.malformed("msgpack map");
        }
    }

    public int arrayHeader() throws WireException {
        try {
            int n = unpacker.unpackArrayHeader();
            return checkEntries(n, 1);
        } catch (IOException | MessagePackException e) {
            throw WireException.malformed("msgpack array");
        }
    }

    private int checkEntries(int n, int minBytesEach) throws WireException {
        if (n < 0 || n > MAX_CONTAINER_ENTRIES || (long) n * minBytesEach > remaining()) {
            throw WireException.malformed("msgpack container size");
        }
        return n;
    }

    /** A string's raw UTF-8 bytes, at most {@link #MAX_STRING_BYTES}. */
    public byte[] stringBytes() throws WireException {
        try {
            int n = unpacker.unpackRawStringHeader();
            if (n < 0 || n > MAX_STRING_BYTES || n > remaining()) {
                throw WireException.malformed("msgpack string length");
            }
            return unpacker.readPayload(n);
        } catch (IOException | MessagePackException e) {
            throw WireException.malformed("msgpack string");
        }
    }

    /**
     * Consumes the next value, a string of at most {@link #MAX_STRING_BYTES}, and returns the index of the
     * first of {@code candidates} it equals byte for byte, or -1; compared in place, nothing is copied.
     */
    public int stringIndex(byte[]... candidates) throws WireException {
        int at = offset + position();
        int end = offset + length;
        int n;
        int start;
        if (at < end && (array[at] & 0xE0) == 0xA0) { // fixstr
            n = array[at] & 0x1F;
            start = at + 1;
        } else if (at + 1 < end && (array[at] & 0xFF) == 0xD9) { // str 8
            n = array[at + 1] & 0xFF;
            start = at + 2;
        } else { // str 16 / str 32 (or not a string): the general path, with its checks
            byte[] value = stringBytes();
            for (int i = 0; i < candidates.length; i++) {
                if (Arrays.equals(value, candidates[i])) {
                    return i;
                }
            }
            return -1;
        }
        if (n > MAX_STRING_BYTES || start + n > end) {
            throw WireException.malformed("msgpack string length");
        }
        skip();
        for (int i = 0; i < candidates.length; i++) {
            if (Arrays.equals(array, start, start + n, candidates[i], 0, candidates[i].length)) {
                return i;
            }
        }
        return -1;
    }

    public String string() throws WireException {
        return new String(stringBytes(), StandardCharsets.UTF_8);
    }

    /** Whether the next value is a string equal to {@code expected}; consumes it either way. */
    public boolean stringEquals(byte[] expected) throws WireException {
        return Arrays.equals(stringBytes(), expected);
    }

    /** A bin value's bytes, at most {@code max}: above it, {@code tooLarge} is the drop. */
    public byte[] binary(int max, EventDrop tooLarge) throws WireException {
        try {
            int n = unpacker.unpackBinaryHeader();
            if (n < 0 || n > remaining()) {
                throw WireException.malformed("msgpack bin length");
            }
            if (n > max) {
                throw new WireException(tooLarge, "payload " + n + " bytes (expected: <= " + max + ")");
            }
            return unpacker.readPayload(n);
        } catch (IOException | MessagePackException e) {
            throw WireException.malformed("msgpack bin");
        }
    }

    /**
     * An unsigned 64-bit integer in a long. Values above {@link Long#MAX_VALUE} (uint 64) are read from the
     * array directly: msgpack-core would allocate a BigInteger for them, and publisher IDs are often there.
     */
    public long unsigned64() throws WireException {
        try {
            MessageFormat format = unpacker.getNextFormat();
            if (format == MessageFormat.UINT64) {
                int at = offset + position();
                if (remaining() < 9) {
                    throw WireException.malformed("truncated uint64");
                }
                long value = 0;
                for (int i = 1; i <= 8; i++) {
                    value = (value << 8) | (array[at + i] & 0xFF);
                }
                unpacker.skipValue();
                return value;
            }
            if (format.getValueType() != ValueType.INTEGER) {
                throw WireException.malformed("expected an integer");
            }
            long value = unpacker.unpackLong();
            if (value < 0) {
                throw WireException.malformed("negative integer");
            }
            return value;
        } catch (IOException | MessagePackException e) {
            throw WireException.malformed("msgpack integer");
        }
    }

    public void skip() throws WireException {
        try {
            unpacker.skipValue();
        } catch (IOException | MessagePackException e) {
            throw WireException.malformed("msgpack value");
        }
    }
}
