package dev.continuum.router.kv.dispatch;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.continuum.router.proxy.ingress.anthropic.TokenCounter;
import dev.continuum.router.discovery.DynamoSnapshot;
import dev.continuum.router.kv.artifacts.ModelArtifactResolver;
import dev.continuum.router.kv.artifacts.ModelArtifacts;
import dev.continuum.router.kv.config.KvConfig;
import dev.continuum.router.kv.prompt.PromptEncoder;
import dev.continuum.router.kv.prompt.PromptEncoding;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;

/**
 * {@code count_tokens} from the model's pinned tokenizer: when the model's artifacts are ready, the converted chat
 * body is rendered with its chat template and tokenized by the prompt encoder (off the event loop, on the
 * encoder's pools, as for a KV-routed request), and the count is the length of that encoding, the template's own
 * tokens included. Whenever that is not possible (artifacts not pinned or not fetched yet, the tokenizer still
 * loading, any encoding fallback) the answer is {@code fallback}'s. {@link KvRouting} answers with this counter
 * only while {@code dynamo.kv.enabled}, and with {@code fallback} otherwise.
 */
public final class KvTokenCounter implements TokenCounter {
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Supplier<DynamoSnapshot> snapshots;
    private final UnaryOperator<String> workerModel;
    private final Supplier<KvConfig> kvConfig;
    private final ModelArtifactResolver resolver;
    private final PromptEncoder encoder;
    private final TokenCounter fallback;

    KvTokenCounter(Supplier<DynamoSnapshot> snapshots, UnaryOperator<String> workerModel,
            Supplier<KvConfig> kvConfig, ModelArtifactResolver resolver, PromptEncoder encoder, TokenCounter fallback) {
        this.snapshots = snapshots;
        this.workerModel = workerModel;
        this.kvConfig = kvConfig;
        this.resolver = resolver;
        this.encoder = encoder;
        this.fallback = Objects.requireNonNull(fallback, "fallback");
    }

    @Override
    public CompletionStage<Long> inputTokens(ObjectNode chatBody) {
        KvConfig kv = kvConfig.get();
        String model = chatBody.path("model").asText("");
        ModelArtifacts m = resolver.resolve(snapshots.get(), kv, workerModel.apply(model));
        if (!(m instanceof ModelArtifacts.Ready ready)) {
            return fallback.inputTokens(chatBody);
        }
        byte[] body;
        try {
            body = JSON.writeValueAsBytes(chatBody);
        } catch (JsonProcessingException e) {
            return fallback.inputTokens(chatBody);
        }
        return encoder.encode(ready.artifacts(), body).thenCompose(encoding ->
                encoding instanceof PromptEncoding.Tokens tokens
                        ? CompletableFuture.completedFuture((long) tokens.ids().length)
                        : fallback.inputTokens(chatBody));
    }
}
