package dev.continuum.router.proxy;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufInputStream;
import java.io.IOException;
import java.io.InputStream;

/**
 * Reads {@code model} and {@code stream} from a request body with Jackson's streaming parser:
 * no tree is built and other fields are only tokenized (which still proves the whole body is
 * well-formed JSON). In the same pass it notes whether {@code nvext} carries worker-pinning fields
 * ({@link UntrustedBodyFields}) and estimates the prompt's tokens ({@link PromptTokens}), so nothing
 * later parses the body again. The body bytes are not modified here.
 */
final class RequestBodyInspector {
    private static final JsonFactory JSON = JsonFactory.builder().build();

    /** The client sent something the proxy refuses with 400. */
    static final class InvalidBody extends Exception {
        private static final long serialVersionUID = 1L;
        final boolean json;
        private final String detail;

        InvalidBody(String message, boolean json) {
            super(message, null, false, false);
            this.json = json;
            this.detail = message;
        }

        /** Never null: every one is built with the detail the client is told. */
        @Override
        public String getMessage() {
            return detail;
        }
    }

    private RequestBodyInspector() {
    }

    /** @param estimatePrompt whether to walk {@code messages}/{@code prompt} for the token estimate (else 0) */
    static ParsedRequest inspect(ByteBuf body, boolean estimatePrompt) throws InvalidBody {
        return inspect(body, estimatePrompt, false);
    }

    /** @param userKey whether to hash the first {@code user} message's content ({@link ParsedRequest#firstUserMessageKey}) */
    static ParsedRequest inspect(ByteBuf body, boolean estimatePrompt, boolean userKey) throws InvalidBody {
        if (!body.isReadable()) {
            throw new InvalidBody("The request body is empty.", true);
        }
        String model = null;
        boolean stream = false;
        boolean untrusted = false;
        long promptTokens = 0;
        long userMessageKey = 0;
        try (JsonParser p = open(body)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                throw new InvalidBody("The request body must be a JSON object.", true);
            }
            JsonToken t;
            while ((t = p.nextToken()) == JsonToken.FIELD_NAME) {
                String name = p.currentName();
                JsonToken v = p.nextToken();
                if ("model".equals(name)) {
                    if (v == JsonToken.VALUE_STRING) {
                        model = p.getText();
                    } else if (v != JsonToken.VALUE_NULL) {
                        throw new InvalidBody("'model' must be a string.", false);
                    }
                } else if ("stream".equals(name)) {
                    if (v == JsonToken.VALUE_TRUE) {
                        stream = true;
                    } else if (v == JsonToken.VALUE_FALSE || v == JsonToken.VALUE_NULL) {
                        stream = false;
                    } else {
                        throw new InvalidBody("'stream' must be a boolean.", false);
                    }
                } else if ("nvext".equals(name) && v == JsonToken.START_OBJECT) {
                    untrusted |= scanNvext(p);
                } else if (userKey && "messages".equals(name) && v == JsonToken.START_ARRAY) {
                    MessageWalk w = new MessageWalk(estimatePrompt);
                    w.walk(p);
                    promptTokens += w.tokens;
                    userMessageKey = w.userKey;
                } else if (estimatePrompt && ("messages".equals(name) || "prompt".equals(name))) {
                    promptTokens += promptTokens(p, v);
                } else {
                    p.skipChildren();
                }
            }
            if (t != JsonToken.END_OBJECT) {
                throw new InvalidBody("Unexpected end of the request body.", true);
            }
            if (p.nextToken() != null) {
                throw new InvalidBody("Unexpected data after the JSON object.", true);
            }
        } catch (JsonProcessingException e) {
            throw new InvalidBody(e.getOriginalMessage(), true);
        } catch (IOException e) {
            throw new InvalidBody("The request body could not be read.", true);
        }
        if (model == null || model.isEmpty()) {
            throw new InvalidBody("You must provide a model parameter.", false);
        }
        return new ParsedRequest(model, stream, untrusted, promptTokens, userMessageKey);
    }

    /**
     * {@link PromptTokens#estimate} summed over the string values of {@code messages} or {@code prompt} (parser on
     * its value {@code v}), role names and content-part types excluded; read from the parser's own buffer.
     */
    private static long promptTokens(JsonParser p, JsonToken v) throws IOException {
        if (v == JsonToken.VALUE_STRING) {
            return PromptTokens.estimate(p.getTextCharacters(), p.getTextOffset(), p.getTextLength());
        }
        if (v != JsonToken.START_OBJECT && v != JsonToken.START_ARRAY) {
            return 0;
        }
        long tokens = 0;
        int depth = 1;
        while (depth > 0) {
            JsonToken t = p.nextToken();
            if (t == null) {
                break; // the caller reports the truncated body
            } else if (t == JsonToken.START_OBJECT || t == JsonToken.START_ARRAY) {
                depth++;
            } else if (t == JsonToken.END_OBJECT || t == JsonToken.END_ARRAY) {
                depth--;
            } else if (t == JsonToken.VALUE_STRING && !"role".equals(p.currentName())
                    && !"type".equals(p.currentName())) {
                tokens += PromptTokens.estimate(p.getTextCharacters(), p.getTextOffset(), p.getTextLength());
            }
        }
        return tokens;
    }

    /**
     * One pass over {@code messages} (parser on its START_ARRAY) that estimates tokens like {@link #promptTokens}
     * and hashes the string values of the first message whose {@code role} is {@code user} (role and part types
     * excluded), whatever the order of its fields.
     */
    private static final class MessageWalk {
        private final boolean estimate;
        long tokens;
        long userKey;

        MessageWalk(boolean estimate) {
            this.estimate = estimate;
        }

        void walk(JsonParser p) throws IOException {
            int depth = 1;
            long hash = AffinityKeys.SEED;
            boolean user = false;
            while (depth > 0) {
                JsonToken t = p.nextToken();
                if (t == null) {
                    return; // the caller reports the truncated body
                } else if (t == JsonToken.START_OBJECT || t == JsonToken.START_ARRAY) {
                    if (depth == 1) {
                        hash = AffinityKeys.SEED;
                        user = false;
                    }
                    depth++;
                } else if (t == JsonToken.END_OBJECT || t == JsonToken.END_ARRAY) {
                    depth--;
                    if (depth == 1 && user && userKey == 0) {
                        userKey = AffinityKeys.finish(hash);
                    }
                } else if (t == JsonToken.VALUE_STRING) {
                    String field = p.currentName();
                    if (depth == 2 && "role".equals(field)) {
                        user = "user".equals(p.getText());
                    } else if (!"role".equals(field) && !"type".equals(field)) {
                        char[] chars = p.getTextCharacters();
                        int off = p.getTextOffset();
                        int len = p.getTextLength();
                        if (estimate) {
                            tokens += PromptTokens.estimate(chars, off, len);
                        }
                        if (userKey == 0) {
                            hash = AffinityKeys.mix(hash, chars, off, len);
                        }
                    }
                }
            }
        }
    }

    /** Walks the {@code nvext} object (parser on its START_OBJECT); true if it holds a routing field. */
    private static boolean scanNvext(JsonParser p) throws IOException {
        boolean found = false;
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            if (UntrustedBodyFields.NVEXT_ROUTING_FIELDS.contains(p.currentName())) {
                found = true;
            }
            p.nextToken();
            p.skipChildren();
        }
        return found;
    }

    private static JsonParser open(ByteBuf body) throws IOException {
        if (body.hasArray()) {
            return JSON.createParser(body.array(), body.arrayOffset() + body.readerIndex(), body.readableBytes());
        }
        // A duplicate: reading must not move the indexes of the buffer that will be forwarded.
        InputStream in = new ByteBufInputStream(body.duplicate());
        return JSON.createParser(in);
    }
}
