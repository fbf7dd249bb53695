package dev.continuum.router.sim;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.util.Arrays;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * One chat completion the frontend emulator accepted, as it arrived: the body, and the {@code nvext.token_data} it
 * carried (the token IDs a router rendered for it), so a test can check them against an independent tokenization
 * of the very body the frontend got.
 *
 * @param body      the request body as received (UTF-8 JSON)
 * @param tokenData {@code nvext.token_data} as unsigned 32-bit IDs, or null when absent; an element that is not
 *                  a u32 makes the whole field read as invalid ({@link #tokenDataValid} false)
 * @param tokenDataValid whether {@code nvext.token_data}, when present, is an array of u32 values
 * @param decodeWorker the decode (or aggregated) worker pinned
 */
public record ReceivedChat(String body, long @Nullable [] tokenData, boolean tokenDataValid, long decodeWorker) {
    private static final ObjectMapper JSON = new ObjectMapper();

    public ReceivedChat {
        Objects.requireNonNull(body, "body");
        tokenData = tokenData == null ? null : tokenData.clone();
    }

    @Override
    public long @Nullable [] tokenData() {
        return tokenData == null ? null : tokenData.clone();
    }

    /** Reads {@code nvext.token_data} from {@code body} as upstream's {@code Option<Vec<u32>>} would. */
    static ReceivedChat of(String body, long decodeWorker) {
        JsonNode data;
        try {
            data = JSON.readTree(body).path("nvext").path("token_data");
        } catch (IOException e) {
            return new ReceivedChat(body, null, true, decodeWorker);
        }
        if (data.isMissingNode() || data.isNull()) {
            return new ReceivedChat(body, null, true, decodeWorker);
        }
        if (!data.isArray()) {
            return new ReceivedChat(body, null, false, decodeWorker);
        }
        long[] ids = new long[data.size()];
        for (int i = 0; i < ids.length; i++) {
            JsonNode t = data.get(i);
            if (!t.isIntegralNumber() || !t.canConvertToLong() || t.longValue() < 0 || t.longValue() > 0xFFFF_FFFFL) {
                return new ReceivedChat(body, null, false, decodeWorker);
            }
            ids[i] = t.longValue();
        }
        return new ReceivedChat(body, ids, true, decodeWorker);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ReceivedChat r && r.body.equals(body) && Arrays.equals(r.tokenData, tokenData)
                && r.tokenDataValid == tokenDataValid && r.decodeWorker == decodeWorker;
    }

    @Override
    public int hashCode() {
        return Objects.hash(body, Arrays.hashCode(tokenData), tokenDataValid, decodeWorker);
    }

    @Override
    public String toString() {
        return "ReceivedChat[decodeWorker=" + decodeWorker + ", tokenData="
                + (tokenData == null ? "none" : tokenData.length + " ids") + ", body=" + body.length() + " chars]";
    }
}
