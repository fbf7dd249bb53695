package dev.continuum.router.kv.backend;

import dev.continuum.router.testing.FreePorts;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The Python engine publisher of {@code engine-kv/publisher.py} (python3-zmq, python3-msgpack), driven line by
 * line: each command returns once the script has done it.
 */
final class EnginePublisherProcess implements AutoCloseable {
    final int pubPort = FreePorts.next();
    final int replayPort = FreePorts.next();
    private final Process process;
    private final Writer in;
    private final BufferedReader out;

    EnginePublisherProcess(String generation, String topic) throws IOException {
        Path script = Files.createTempFile("engine-kv-publisher", ".py");
        try (var s = EnginePublisherProcess.class.getResourceAsStream("/engine-kv/publisher.py")) {
            Files.write(script, s.readAllBytes());
        }
        script.toFile().deleteOnExit();
        process = new ProcessBuilder("/usr/bin/python3", script.toString(), Integer.toString(pubPort),
                Integer.toString(replayPort), generation, topic).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        in = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
        out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        String first = out.readLine();
        if (!"ready".equals(first)) {
            throw new IOException("publisher did not start: " + first);
        }
    }

    /** Sends one JSON command and returns the script's answer. */
    String send(String json) throws IOException {
        in.write(json.replace('\n', ' ') + "\n");
        in.flush();
        String answer = out.readLine();
        if (answer == null) {
            throw new IOException("publisher exited");
        }
        return answer;
    }

    String batch(long seq, boolean publish, String events) throws IOException {
        return send("{\"op\":\"batch\",\"seq\":" + Long.toUnsignedString(seq) + ",\"publish\":" + publish
                + ",\"events\":[" + events + "]}");
    }

    static String stored(String hashes, String parent, int blocks, int blockSize) {
        StringBuilder tokens = new StringBuilder();
        for (int i = 0; i < blocks * blockSize; i++) {
            tokens.append(i == 0 ? "" : ",").append(100 + i);
        }
        return "{\"type\":\"BlockStored\",\"hashes\":[" + hashes + "],\"parent\":" + parent + ",\"tokens\":["
                + tokens + "],\"block_size\":" + blockSize + "}";
    }

    static String removed(String hashes) {
        return "{\"type\":\"BlockRemoved\",\"hashes\":[" + hashes + "]}";
    }

    @Override
    public void close() {
        process.destroy();
    }
}
