package dev.continuum.router.kv.events;

/**
 * A bounded, allocation-free msgpack reader over one byte range. Every declared length is checked against
 * the bytes left before it is used, so a header claiming 4 GiB fails at once; any violation throws the one
 * preallocated {@link Malformed} (no stack trace), which the decoder turns into a counted drop. Not
 * thread-safe; reused through {@link #reset}.
 *
 * <p>msgpack-core is not used here: kv-events arrays hold up to 8,192 blocks, and reading them in place
 * avoids its per-value overhead and BigInteger allocation for u64 values above {@code Long.MAX_VALUE}.
 */
final class MsgpackReader {
    enum Kind { NIL, BOOLEAN, INT, FLOAT, STRING, BINARY, ARRAY, MAP, EXT }

    /** Raised for any malformed or out-of-bounds input; preallocated, carries no peer bytes. */
    static final class Malformed extends Exception {
        private static final long serialVersionUID = 1L;

        private Malformed() {
            super("malformed msgpack", null, false, false);
        }
    }

    static final Malformed MALFORMED = new Malformed();

    private byte[] a = new byte[0];
    private int pos;
    private int end;

    MsgpackReader reset(byte[] array, int offset, int length) {
        a = array;
        pos = offset;
        end = offset + length;
        return this;
    }

    int position() {
        return pos;
    }

    void position(int position) {
        pos = position;
    }

    int remaining() {
        return end - pos;
    }

    private int u8() throws Malformed {
        if (pos >= end) {
            throw MALFORMED;
        }
        return a[pos++] & 0xFF;
    }

    private long be(int bytes) throws Malformed {
        if (end - pos < bytes) {
            throw MALFORMED;
        }
        long v = 0;
        for (int i = 0; i < bytes; i++) {
            v = (v << 8) | (a[pos++] & 0xFF);
        }
        return v;
    }

    Kind peek() throws Malformed {
        if (pos >= end) {
            throw MALFORMED;
        }
        int b = a[pos] & 0xFF;
        if (b <= 0x7F || b >= 0xE0) {
            return Kind.INT;
        }
        if (b <= 0x8F) {
            return Kind.MAP;
        }
        if (b <= 0x9F) {
            return Kind.ARRAY;
        }
        if (b <= 0xBF) {
            return Kind.STRING;
        }
        return switch (b) {
            case 0xC0 -> Kind.NIL;
            case 0xC2, 0xC3 -> Kind.BOOLEAN;
            case 0xC4, 0xC5, 0xC6 -> Kind.BINARY;
            case 0xCA, 0xCB -> Kind.FLOAT;
            case 0xCC, 0xCD, 0xCE, 0xCF, 0xD0, 0xD1, 0xD2, 0xD3 -> Kind.INT;
            case 0xD9, 0xDA, 0xDB -> Kind.STRING;
            case 0xDC, 0xDD -> Kind.ARRAY;
            case 0xDE, 0xDF -> Kind.MAP;
            case 0xC7, 0xC8, 0xC9, 0xD4, 0xD5, 0xD6, 0xD7, 0xD8 -> Kind.EXT;
            default -> throw MALFORMED; // 0xC1 is never used
        };
    }

    boolean tryNil() throws Malformed {
        if (pos < end && (a[pos] & 0xFF) == 0xC0) {
            pos++;
            return true;
        }
        return false;
    }

    /** A map header; each entry needs at least two bytes, so a count the bytes left cannot hold fails. */
    int mapHeader() throws Malformed {
        int b = u8();
        long n;
        if ((b & 0xF0) == 0x80) {
            n = b & 0x0F;
        } else if (b == 0xDE) {
            n = be(2);
        } else if (b == 0xDF) {
            n = be(4);
        } else {
            throw MALFORMED;
        }
        return count(n, 2);
    }

    int arrayHeader() throws Malformed {
        int b = u8();
        long n;
        if ((b & 0xF0) == 0x90) {
            n = b & 0x0F;
        } else if (b == 0xDC) {
            n = be(2);
        } else if (b == 0xDD) {
            n = be(4);
        } else {
            throw MALFORMED;
        }
        return count(n, 1);
    }

    private int count(long n, int minBytesEach) throws Malformed {
        if (n * minBytesEach > remaining()) {
            throw MALFORMED;
        }
        return (int) n;
    }

    /** A string's byte length; its bytes follow at {@link #position()}. */
    private int stringHeader() throws Malformed {
        int b = u8();
        long n;
        if ((b & 0xE0) == 0xA0) {
            n = b & 0x1F;
        } else if (b == 0xD9) {
            n = be(1);
        } else if (b == 0xDA) {
            n = be(2);
        } else if (b == 0xDB) {
            n = be(4);
        } else {
            throw MALFORMED;
        }
        if (n > remaining()) {
            throw MALFORMED;
        }
        return (int) n;
    }

    /**
     * Consumes a string and returns the index of the first candidate (ASCII bytes) it equals, or -1.
     * Compared in place; nothing is copied.
     */
    int stringIndex(byte[][] candidates) throws Malformed {
        int n = stringHeader();
        int start = pos;
        pos += n;
        for (int i = 0; i < candidates.length; i++) {
            if (java.util.Arrays.equals(a, start, start + n, candidates[i], 0, candidates[i].length)) {
                return i;
            }
        }
        return -1;
    }

    /**
     * An unsigned 64-bit integer, as its bits in a long (2^63 and above read negative; compare them with
     * {@link Long#compareUnsigned}). A negative msgpack integer is malformed unless {@code bitCast}, where it
     * is taken as the two's-complement bits of a u64 (engine block hashes may arrive as i64).
     */
    long u64(boolean bitCast) throws Malformed {
        int b = u8();
        if (b <= 0x7F) {
            return b;
        }
        if (b >= 0xE0) {
            return negative(b - 256, bitCast);
        }
        return switch (b) {
            case 0xCC -> be(1);
            case 0xCD -> be(2);
            case 0xCE -> be(4);
            case 0xCF -> be(8);
            case 0xD0 -> negative((byte) be(1), bitCast);
            case 0xD1 -> negative((short) be(2), bitCast);
            case 0xD2 -> negative((int) be(4), bitCast);
            case 0xD3 -> negative(be(8), bitCast);
            default -> throw MALFORMED;
        };
    }

    private static long negative(long value, boolean bitCast) throws Malformed {
        if (value < 0 && !bitCast) {
            throw MALFORMED;
        }
        return value;
    }

    /** Skips one whole value, however nested, iteratively (no recursion a deep input could exhaust). */
    void skip() throws Malformed {
        long pending = 1;
        while (pending > 0) {
            pending--;
            int b = u8();
            if (b <= 0x7F || b >= 0xE0 || b == 0xC0 || b == 0xC2 || b == 0xC3) {
                continue;
            }
            if ((b & 0xF0) == 0x80) {
                pending += 2L * (b & 0x0F);
            } else if ((b & 0xF0) == 0x90) {
                pending += b & 0x0F;
            } else if ((b & 0xE0) == 0xA0) {
                advance(b & 0x1F);
            } else {
                switch (b) {
                    case 0xC4, 0xD9 -> advance(be(1));
                    case 0xC5, 0xDA -> advance(be(2));
                    case 0xC6, 0xDB -> advance(be(4));
                    case 0xC7 -> advance(be(1) + 1);
                    case 0xC8 -> advance(be(2) + 1);
                    case 0xC9 -> advance(be(4) + 1);
                    case 0xCA -> advance(4);
                    case 0xCB -> advance(8);
                    case 0xCC, 0xD0 -> advance(1);
                    case 0xCD, 0xD1 -> advance(2);
                    case 0xCE, 0xD2 -> advance(4);
                    case 0xCF, 0xD3 -> advance(8);
                    case 0xD4 -> advance(2);
                    case 0xD5 -> advance(3);
                    case 0xD6 -> advance(5);
                    case 0xD7 -> advance(9);
                    case 0xD8 -> advance(17);
                    case 0xDC -> pending += be(2);
                    case 0xDD -> pending += be(4);
                    case 0xDE -> pending += 2 * be(2);
                    case 0xDF -> pending += 2 * be(4);
                    default -> throw MALFORMED;
                }
            }
            if (pending > remaining()) { // every pending value needs at least one byte
                throw MALFORMED;
            }
        }
    }

    private void advance(long n) throws Malformed {
        if (n > remaining()) {
            throw MALFORMED;
        }
        pos += (int) n;
    }
}
