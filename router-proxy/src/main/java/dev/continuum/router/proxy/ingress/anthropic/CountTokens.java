package dev.continuum.router.proxy.ingress.anthropic;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.continuum.router.proxy.ingress.IngressJson;
import dev.continuum.router.proxy.IngressConverter;
import dev.continuum.router.proxy.ProxyRoute;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * {@code POST /v1/messages/count_tokens}: the request is converted as a Messages request would be (so a body
 * that would be refused there is refused here, in Anthropic's error shape) and counted by a
 * {@link TokenCounter}, or by the {@link EstimatedTokens estimate} when that counter fails; the answer is
 * {@code {"input_tokens": n}}. Nothing is dispatched.
 */
final class CountTokens implements ProxyRoute.LocalAnswer {
    private final TokenCounter counter;
    private final EstimatedTokens estimate = new EstimatedTokens();

    CountTokens(TokenCounter counter) {
        this.counter = Objects.requireNonNull(counter, "counter");
    }

    @Override
    public CompletionStage<FullHttpResponse> answer(ByteBuf body, ByteBufAllocator alloc) {
        ObjectNode chat;
        try {
            chat = AnthropicRequests.toChat(IngressJson.readRequest(body), true);
        } catch (IngressConverter.InvalidRequest e) {
            ObjectNode err = IngressJson.object().put("type", "error");
            err.putObject("error").put("type", "invalid_request_error").put("message", e.getMessage());
            return CompletableFuture.completedFuture(json(HttpResponseStatus.BAD_REQUEST, IngressJson.write(err, alloc)));
        }
        CompletionStage<Long> counted;
        try {
            counted = counter.inputTokens(chat);
        } catch (RuntimeException e) {
            counted = CompletableFuture.failedFuture(e);
        }
        return counted.handle((n, failure) -> {
            long tokens = n == null || failure != null ? estimate.estimate(chat) : Math.max(0, n);
            return json(HttpResponseStatus.OK, IngressJson.write(IngressJson.object().put("input_tokens", tokens), alloc));
        });
    }

    private static FullHttpResponse json(HttpResponseStatus status, ByteBuf body) {
        FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status, body);
        r.headers().set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_JSON)
                .setInt(HttpHeaderNames.CONTENT_LENGTH, body.readableBytes());
        return r;
    }
}
