package dev.continuum.router.proxy.ingress.anthropic;

import dev.continuum.router.proxy.ingress.IngressJson;
import dev.continuum.router.proxy.IngressConverter;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.codec.http.HttpHeaderValues;

/** The Anthropic Messages wire on the ingress seam: requests, answers, streams and errors. */
public final class AnthropicConverter implements IngressConverter {
    private static final CharSequence JSON = HttpHeaderValues.APPLICATION_JSON;

    @Override
    public ByteBuf toChatRequest(ByteBuf body, ByteBufAllocator alloc) throws InvalidRequest {
        return IngressJson.write(AnthropicRequests.toChat(IngressJson.readRequest(body), false), alloc);
    }

    @Override
    public ByteBuf fromChatResponse(ByteBuf chatBody, ByteBufAllocator alloc) throws InvalidResponse {
        return IngressJson.write(AnthropicResponses.fromChat(IngressJson.readResponse(chatBody)), alloc);
    }

    @Override
    public CharSequence responseContentType() {
        return JSON;
    }

    @Override
    public StreamConverter newStream() {
        return new AnthropicStream();
    }

    @Override
    public ByteBuf error(int status, ByteBuf body, ByteBufAllocator alloc) {
        return AnthropicErrors.body(status, body, alloc);
    }

    @Override
    public CharSequence errorContentType() {
        return JSON;
    }
}
