package dev.continuum.router.bench;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * ZMTP peers for {@link LoadSignalsBenchmark}, run in a child JVM so that their memory is not in the measured
 * heap. One selector thread; prints one listening port per line, then serves until its stdin closes, then
 * prints what it served and exits (it also exits on its own after {@code maxSeconds}).
 *
 * <ul>
 *   <li>{@code idle N}: N listening ports, each a well-behaved PUB (greeting, READY Socket-Type PUB) that
 *       then sends nothing: the subscriptions connect and stay idle.</li>
 *   <li>{@code hostile N}: N listening ports; each accepted connection gets, in turn, one of: random bytes,
 *       a ZMTP 2 greeting, a frame declaring 2^63-1 bytes, a frame declaring 2^64-1 bytes (negative as a
 *       long), a READY with endless metadata properties, a slowloris greeting (5 bytes, then silence).</li>
 * </ul>
 */
public final class BenchPeers {
    static final String[] HOSTILE_KINDS = {"random-bytes", "zmtp-2-greeting", "frame-2^63-1", "frame-2^64-1",
        "endless-metadata", "slowloris-greeting"};

    private BenchPeers() {
    }

    public static void main(String[] args) throws Exception {
        String mode = args[0];
        int ports = Integer.parseInt(args[1]);
        long maxSeconds = args.length > 2 ? Long.parseLong(args[2]) : 300;
        boolean hostile = mode.equals("hostile");
        Selector selector = Selector.open();
        for (int i = 0; i < ports; i++) {
            ServerSocketChannel server = ServerSocketChannel.open();
            server.bind(new InetSocketAddress("127.0.0.1", 0), 4096);
            server.configureBlocking(false);
            server.register(selector, SelectionKey.OP_ACCEPT);
            System.out.println(((InetSocketAddress) server.getLocalAddress()).getPort());
        }
        System.out.flush();
        AtomicBoolean done = new AtomicBoolean();
        Thread stdin = new Thread(() -> {
            try (InputStream in = System.in) {
                while (in.read() >= 0) {
                    // until EOF
                }
            } catch (IOException e) {
                // EOF either way
            }
            done.set(true);
            selector.wakeup();
        }, "stdin");
        stdin.setDaemon(true);
        stdin.start();
        long[] served = new long[HOSTILE_KINDS.length];
        long accepted = 0;
        long deadline = System.nanoTime() + maxSeconds * 1_000_000_000L;
        ByteBuffer drain = ByteBuffer.allocate(4096);
        java.util.Random random = new java.util.Random(42);
        while (!done.get() && System.nanoTime() < deadline) {
            selector.select(1000);
            for (SelectionKey key : selector.selectedKeys()) {
                try {
                    if (key.isAcceptable()) {
                        SocketChannel ch;
                        while ((ch = ((ServerSocketChannel) key.channel()).accept()) != null) {
                            ch.configureBlocking(false);
                            ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
                            ByteBuffer out;
                            if (hostile) {
                                int kind = (int) (accepted % HOSTILE_KINDS.length);
                                served[kind]++;
                                out = ByteBuffer.wrap(hostile(kind, random));
                            } else {
                                out = ByteBuffer.wrap(concat(greeting(3), readyPub()));
                            }
                            accepted++;
                            ch.write(out); // small: fits in the socket buffer
                            ch.register(selector, SelectionKey.OP_READ);
                        }
                    } else if (key.isReadable()) {
                        drain.clear();
                        if (((SocketChannel) key.channel()).read(drain) < 0) {
                            key.channel().close();
                        }
                    }
                } catch (IOException e) {
                    key.channel().close();
                }
            }
            selector.selectedKeys().clear();
        }
        StringBuilder report = new StringBuilder("served ").append(accepted).append(" connections");
        if (hostile) {
            for (int i = 0; i < served.length; i++) {
                report.append(i == 0 ? ": " : ", ").append(HOSTILE_KINDS[i]).append(' ').append(served[i]);
            }
        }
        System.out.println(report);
        System.out.flush();
        System.exit(0);
    }

    static byte[] hostile(int kind, java.util.Random random) {
        byte[] ready = concat(greeting(3), readyPub());
        return switch (kind) {
            case 0 -> {
                byte[] b = new byte[256];
                random.nextBytes(b);
                b[0] = 0x00; // not the 0xFF signature byte
                yield b;
            }
            case 1 -> greeting(2);
            case 2 -> concat(ready, longFrame(0x02, Long.MAX_VALUE));
            case 3 -> concat(ready, longFrame(0x03, -1L));
            case 4 -> concat(greeting(3), endlessMetadata());
            default -> java.util.Arrays.copyOf(greeting(3), 5);
        };
    }

    static byte[] greeting(int version) {
        ByteBuffer b = ByteBuffer.allocate(64);
        b.put((byte) 0xFF).put(new byte[8]).put((byte) 0x7F).put((byte) version).put((byte) 0);
        b.put("NULL".getBytes(StandardCharsets.US_ASCII)).put(new byte[16]);
        b.put((byte) 1); // as-server
        return b.array();
    }

    static byte[] readyPub() {
        byte[] name = "READY".getBytes(StandardCharsets.US_ASCII);
        byte[] prop = "Socket-Type".getBytes(StandardCharsets.US_ASCII);
        byte[] value = "PUB".getBytes(StandardCharsets.US_ASCII);
        int body = 1 + name.length + 1 + prop.length + 4 + value.length;
        ByteBuffer b = ByteBuffer.allocate(2 + body);
        b.put((byte) 0x04).put((byte) body).put((byte) name.length).put(name).put((byte) prop.length).put(prop)
                .putInt(value.length).put(value);
        return b.array();
    }

    private static byte[] longFrame(int flags, long size) {
        return ByteBuffer.allocate(9).put((byte) flags).putLong(size).array();
    }

    /** A READY command with 200 empty properties (the bound is 32), within the command size bound. */
    private static byte[] endlessMetadata() {
        List<byte[]> props = new ArrayList<>();
        int body = 1 + 5;
        for (int i = 0; i < 200; i++) {
            byte[] p = ("X-" + i).getBytes(StandardCharsets.US_ASCII);
            props.add(p);
            body += 1 + p.length + 4;
        }
        ByteBuffer b = ByteBuffer.allocate(9 + body);
        b.put((byte) 0x06).putLong(body).put((byte) 5).put("READY".getBytes(StandardCharsets.US_ASCII));
        for (byte[] p : props) {
            b.put((byte) p.length).put(p).putInt(0);
        }
        return b.array();
    }

    static byte[] concat(byte[] a, byte[] b) {
        byte[] r = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, r, a.length, b.length);
        return r;
    }
}
