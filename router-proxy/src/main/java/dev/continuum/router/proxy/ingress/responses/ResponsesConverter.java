package dev.continuum.router.proxy.ingress.responses;

import dev.continuum.router.proxy.ingress.IngressJson;
import dev.continuum.router.proxy.IngressConverter;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.codec.http.HttpHeaderValues;

/** The OpenAI Responses wire on the ingress seam, for backends that serve chat completions. */
public final class ResponsesConverter implements IngressConverter {
    @Override
    public ByteBuf toChatRequest(ByteBuf body, ByteBufAllocator alloc) throws InvalidRequest {
        return IngressJson.write(ResponsesRequests.toChat(IngressJson.readRequest(body)), alloc);
    }

    @Override
    public ByteBuf fromChatResponse(ByteBuf chatBody, ByteBufAllocator alloc) throws InvalidResponse {
        return IngressJson.write(ResponseObjects.fromChat(IngressJson.readResponse(chatBody)), alloc);
    }

    @Override
    public CharSequence responseContentType() {
        return HttpHeaderValues.APPLICATION_JSON;
    }

    @Override
    public StreamConverter newStream() {
        return new ResponsesStream();
    }

    @Override
    public ByteBuf error(int status, ByteBuf body, ByteBufAllocator alloc) {
        return ResponsesErrors.body(status, body, alloc);
    }

    @Override
    public CharSequence errorContentType() {
        return HttpHeaderValues.APPLICATION_JSON;
    }
}
