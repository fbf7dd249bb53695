package dev.continuum.router.proxy.http;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * An upstream that writes exactly the bytes of a scripted answer on a raw socket: the case is named by the request's
 * {@code x-case} header (the router forwards it), and its steps write bytes, wait for the test to open a gate (the
 * client saw the events before it), hand a stall to the test, or drop the connection. {@code GET /release/<case>}
 * opens that case's gate, so a client in another process (node) can open it once it read what came before.
 */
final class HostileUpstream implements AutoCloseable {
    /** One step of a scripted answer. */
    interface Step {
        /** Runs the step; false when the connection is gone (the script stops). */
        boolean run(Connection c) throws IOException, InterruptedException;
    }

    /** What a step acts on. */
    static final class Connection {
        private final Socket socket;
        private final OutputStream out;
        private final CountDownLatch gate;
        private final Runnable onStall;

        private Connection(Socket socket, CountDownLatch gate, Runnable onStall) throws IOException {
            this.socket = socket;
            this.out = socket.getOutputStream();
            this.gate = gate;
            this.onStall = onStall;
        }
    }

    private static final String HEAD = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
            + "transfer-encoding: chunked\r\nconnection: close\r\n\r\n";

    private final ServerSocket server;
    private final Map<String, List<Step>> scripts;
    private final Runnable onStall;
    private final Map<String, CountDownLatch> gates = new ConcurrentHashMap<>();
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private final Thread acceptor;

    private HostileUpstream(Map<String, List<Step>> scripts, Runnable onStall) throws IOException {
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        this.scripts = scripts;
        this.onStall = onStall;
        this.acceptor = new Thread(this::accept, "hostile-upstream");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /** Serves {@code scripts} by case name; {@code onStall} runs on the connection's thread at a stall step. */
    static HostileUpstream start(Map<String, List<Step>> scripts, Runnable onStall) {
        try {
            return new HostileUpstream(scripts, onStall);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    URI url() {
        return URI.create("http://127.0.0.1:" + server.getLocalPort());
    }

    /** Opens the gate of the case's current connection (its latch is made before the script's first step). */
    void release(String name) {
        CountDownLatch g = gates.get(name);
        if (g == null) {
            throw new IllegalStateException("no connection of case " + name + " is waiting");
        }
        g.countDown();
    }

    // ---------------------------------------------------------------- steps

    /** The 200 event-stream head, chunked, with {@code connection: close}. */
    static String head() {
        return HEAD;
    }

    /** {@code s} as one chunk of a chunked body. */
    static String chunk(String s) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        return Integer.toHexString(b.length) + "\r\n" + s + "\r\n";
    }

    /** The chunked body's terminator. */
    static String end() {
        return "0\r\n\r\n";
    }

    /** Writes {@code bytes} in one write call (so they arrive in one read of a loopback peer). */
    static Step write(String bytes) {
        byte[] b = bytes.getBytes(StandardCharsets.UTF_8);
        return c -> {
            c.out.write(b);
            c.out.flush();
            return true;
        };
    }

    /** Waits until the gate opens ({@link #release}). */
    static Step gate() {
        return c -> {
            if (!c.gate.await(60, TimeUnit.SECONDS)) {
                throw new IllegalStateException("the gate was never opened");
            }
            return true;
        };
    }

    /** Goes silent: the test is told ({@code onStall}), and the step ends when the router closes the connection. */
    static Step stall() {
        return c -> {
            c.onStall.run();
            InputStream in = c.socket.getInputStream();
            while (in.read() >= 0) {
                // discard until the router closes
            }
            return false;
        };
    }

    /** Closes the connection (no terminator after what was written). */
    static Step drop() {
        return c -> {
            c.socket.close();
            return false;
        };
    }

    // ---------------------------------------------------------------- serving

    private void accept() {
        while (!server.isClosed()) {
            try {
                Socket s = server.accept();
                sockets.add(s);
                Thread t = new Thread(() -> serve(s), "hostile-upstream-conn");
                t.setDaemon(true);
                t.start();
            } catch (IOException e) {
                return; // closed
            }
        }
    }

    private void serve(Socket s) {
        try (s) {
            InputStream in = s.getInputStream();
            String head = readHead(in);
            String[] lines = head.split("\r\n");
            String requestLine = lines[0];
            if (requestLine.startsWith("GET /release/")) {
                release(requestLine.substring("GET /release/".length(), requestLine.indexOf(' ', 4)));
                s.getOutputStream().write("HTTP/1.1 204 No Content\r\nconnection: close\r\n\r\n"
                        .getBytes(StandardCharsets.US_ASCII));
                return;
            }
            String name = null;
            int length = 0;
            for (String line : lines) {
                String lower = line.toLowerCase(Locale.ROOT);
                if (lower.startsWith("x-case:")) {
                    name = line.substring(7).trim();
                } else if (lower.startsWith("content-length:")) {
                    length = Integer.parseInt(line.substring(15).trim());
                }
            }
            in.readNBytes(length);
            List<Step> script = name == null ? null : scripts.get(name);
            if (script == null) {
                s.getOutputStream().write(("HTTP/1.1 404 Not Found\r\ncontent-type: application/json\r\n"
                        + "content-length: 2\r\nconnection: close\r\n\r\n{}").getBytes(StandardCharsets.US_ASCII));
                return;
            }
            CountDownLatch gate = new CountDownLatch(1);
            gates.put(name, gate);
            Connection c = new Connection(s, gate, onStall);
            for (Step step : script) {
                if (!step.run(c)) {
                    return;
                }
            }
            s.shutdownOutput();
            while (in.read() >= 0) {
                // the answer is complete: wait for the router to close its side
            }
        } catch (IOException e) {
            // the router dropped the connection: expected after a fault
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static String readHead(InputStream in) throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        int state = 0;
        while (state < 4) {
            int c = in.read();
            if (c < 0 || b.size() > 65536) {
                throw new IOException("no request head");
            }
            b.write(c);
            state = (c == '\r' && (state == 0 || state == 2)) || (c == '\n' && (state == 1 || state == 3)) ? state + 1
                    : c == '\r' ? 1 : 0;
        }
        return b.toString(StandardCharsets.ISO_8859_1);
    }

    @Override
    public void close() {
        try {
            server.close();
        } catch (IOException e) {
            // closing
        }
        for (Socket s : sockets) {
            try {
                s.close();
            } catch (IOException e) {
                // closing
            }
        }
    }
}
