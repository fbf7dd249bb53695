package dev.continuum.router.sim;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A Mooncake request trace (kvcache-ai/Mooncake {@code FAST25-release/traces}): one JSON object a line with
 * {@code timestamp} (ms from the start), {@code input_length} and {@code output_length} (tokens) and
 * {@code hash_ids}, the prompt's 512-token blocks, equal IDs meaning equal content with an equal prefix.
 */
record MooncakeTrace(List<Request> requests) {
    static final int TRACE_BLOCK_TOKENS = 512;

    record Request(long timestampMs, int inputLength, int outputLength, long[] hashIds) {
    }

    /** The first {@code limit} requests of {@code file}; a line that is not such a request fails with its number. */
    static MooncakeTrace read(Path file, int limit) throws IOException {
        ObjectMapper json = new ObjectMapper();
        List<Request> out = new ArrayList<>();
        try (BufferedReader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            int lineNo = 0;
            for (String line = in.readLine(); line != null && out.size() < limit; line = in.readLine()) {
                lineNo++;
                if (line.isBlank()) {
                    continue;
                }
                JsonNode n = json.readTree(line);
                JsonNode ids = n.get("hash_ids");
                if (!n.path("timestamp").canConvertToLong() || !n.path("input_length").canConvertToInt()
                        || ids == null || !ids.isArray()) {
                    throw new IOException(file + ":" + lineNo + ": not a Mooncake request");
                }
                long[] hashIds = new long[ids.size()];
                for (int i = 0; i < hashIds.length; i++) {
                    hashIds[i] = ids.get(i).asLong();
                }
                out.add(new Request(n.get("timestamp").asLong(), n.get("input_length").asInt(),
                        n.path("output_length").asInt(1), hashIds));
            }
        }
        return new MooncakeTrace(List.copyOf(out));
    }

    /** From the first arrival to the last, in trace milliseconds (at least 1). */
    long durationMs() {
        if (requests.isEmpty()) {
            return 1;
        }
        return Math.max(1, requests.get(requests.size() - 1).timestampMs() - requests.get(0).timestampMs());
    }
}
