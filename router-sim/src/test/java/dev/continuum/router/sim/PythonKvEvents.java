package dev.continuum.router.sim;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Debian's python3-zmq and python3-msgpack reading the simulator's kv-events ({@code kv_events.py}): an
 * independent decoder of the frames, the envelope and the {@code RouterEvent}, and a real libzmq subscriber.
 */
final class PythonKvEvents implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Process process;
    private final List<JsonNode> messages = new CopyOnWriteArrayList<>();
    private volatile boolean ready;

    private PythonKvEvents(Process process) {
        this.process = process;
    }

    /** Decodes one message's four frames. */
    static JsonNode decode(byte[][] frames) throws Exception {
        List<String> command = new ArrayList<>(List.of("/usr/bin/python3", script().toString(), "decode"));
        for (byte[] f : frames) {
            command.add(HexFormat.of().formatHex(f));
        }
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (p.waitFor() != 0) {
            throw new IllegalStateException("kv_events.py decode: " + out);
        }
        return JSON.readTree(out);
    }

    /** A subscriber to {@code endpoint}'s kv-events; {@link #ready()} once it has connected. */
    static PythonKvEvents subscribe(String endpoint) throws IOException {
        Process p = new ProcessBuilder("/usr/bin/python3", script().toString(), "sub", endpoint)
                .redirectErrorStream(true).start();
        PythonKvEvents sub = new PythonKvEvents(p);
        Thread reader = new Thread(sub::read, "python-kv-events");
        reader.setDaemon(true);
        reader.start();
        return sub;
    }

    private void read() {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(),
                StandardCharsets.UTF_8))) {
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                if (line.equals("ready")) {
                    ready = true;
                } else {
                    messages.add(parse(line));
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A line that is not JSON (a Python traceback) is kept as {@code {"error": line}}. */
    private static JsonNode parse(String line) {
        try {
            return JSON.readTree(line);
        } catch (IOException e) {
            return JSON.createObjectNode().put("error", line);
        }
    }

    boolean ready() {
        return ready;
    }

    /** Every message received so far, in order. */
    List<JsonNode> messages() {
        return List.copyOf(messages);
    }

    private static Path script() {
        try {
            return Path.of(PythonKvEvents.class.getResource("kv_events.py").toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    public void close() {
        process.destroyForcibly();
    }
}
