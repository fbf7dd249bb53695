package dev.continuum.router.sim;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessageUnpacker;
import org.msgpack.value.Value;

/** The ActiveLoad payload: active_prefill_tokens is nil unless the worker reports its prefill backlog. */
class KvMetricsPublisherTest {
    @Test
    void activePrefillTokensIsNilUnlessGiven() throws Exception {
        Map<String, Value> without = unpack(KvMetricsPublisher.activeLoad(7, 1, 5, 9));
        assertThat(without.get("active_prefill_tokens").isNilValue()).isTrue();
        assertThat(without.get("kv_used_blocks").asIntegerValue().asLong()).isEqualTo(9);

        Map<String, Value> with = unpack(KvMetricsPublisher.activeLoad(7, 1, 5, 12_345L, 9));
        assertThat(with.keySet()).containsExactly("worker_id", "dp_rank", "active_decode_blocks",
                "active_prefill_tokens", "scheduler_load_scope", "kv_used_blocks");
        assertThat(with.get("active_prefill_tokens").asIntegerValue().asLong()).isEqualTo(12_345);
        assertThat(with.get("active_decode_blocks").asIntegerValue().asLong()).isEqualTo(5);
        assertThat(with.get("scheduler_load_scope").isNilValue()).isTrue();
    }

    private static Map<String, Value> unpack(byte[] payload) throws Exception {
        try (MessageUnpacker in = MessagePack.newDefaultUnpacker(payload)) {
            Map<String, Value> out = new LinkedHashMap<>();
            int n = in.unpackMapHeader();
            for (int i = 0; i < n; i++) {
                out.put(in.unpackString(), in.unpackValue());
            }
            return out;
        }
    }
}
