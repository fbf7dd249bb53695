package dev.continuum.router.kv.dispatch;

import dev.continuum.router.kv.artifacts.ModelArtifacts;
import dev.continuum.router.kv.prompt.PromptEncoding;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.EnumMap;
import java.util.Map;

/** {@code continuum_dynamo_kv_prompts_total{result}}, every label registered up front. */
public final class KvPromptMetrics {
    public static final String NAME = "continuum_dynamo_kv_prompts";

    private final Map<PromptResult, Counter> counters = new EnumMap<>(PromptResult.class);

    public KvPromptMetrics(MeterRegistry registry) {
        for (PromptResult r : PromptResult.values()) {
            counters.put(r, Counter.builder(NAME).description("What the KV step did with a chat request's prompt")
                    .tag("result", r.label()).register(registry));
        }
    }

    void count(PromptResult result) {
        Counter c = counters.get(result);
        if (c != null) {
            c.increment();
        }
    }

    void unavailable(ModelArtifacts.Why why) {
        count(why == ModelArtifacts.Why.ARTIFACT_UNPINNED ? PromptResult.ARTIFACT_UNPINNED
                : PromptResult.TOKENIZER_UNAVAILABLE);
    }

    void fallback(PromptEncoding.Reason reason) {
        count(switch (reason) {
            case TOKENIZER_UNAVAILABLE -> PromptResult.TOKENIZER_UNAVAILABLE;
            case PROMPT_TOO_LARGE -> PromptResult.PROMPT_TOO_LARGE;
            case RENDER_UNAVAILABLE -> PromptResult.RENDER_UNAVAILABLE;
        });
    }
}
