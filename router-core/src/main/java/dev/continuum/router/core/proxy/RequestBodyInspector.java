package dev.continuum.router.core.proxy;

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
 * well-formed JSON). The body bytes are not modified; the proxy forwards them as they came.
 */
final class RequestBodyInspector {
    private static final JsonFactory JSON = JsonFactory.builder().build();

    /** The client sent something the proxy refuses with 400. */
    static final class InvalidBody extends Exception {
        private static final long serialVersionUID = 1L;
        final boolean json;

        InvalidBody(String message, boolean json) {
            super(message, null, false, false);
            this.json = json;
        }
    }

    private RequestBodyInspector() {
    }

    static ParsedRequest inspect(ByteBuf body) throws InvalidBody {
        if (!body.isReadable()) {
            throw new InvalidBody("The request body is empty.", true);
        }
        String model = null;
        boolean stream = false;
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
        return new ParsedRequest(model, stream);
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
