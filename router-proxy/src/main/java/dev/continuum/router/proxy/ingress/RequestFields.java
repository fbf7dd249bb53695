package dev.continuum.router.proxy.ingress;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.continuum.router.proxy.IngressConverter.InvalidRequest;
import org.jspecify.annotations.Nullable;

/**
 * Typed reads of a client request's fields for the converters. A field that is absent or {@code null} is "not
 * given"; a field of the wrong type is the request's 400, whose message starts with the field's path
 * ({@code messages.0.content.1.text: expected a string.}), as docs/ingresses.md documents.
 */
public final class RequestFields {
    private RequestFields() {
    }

    /** {@code parent.field}, or {@code field} at the top level ({@code parent} empty). */
    public static String path(String parent, String field) {
        return parent.isEmpty() ? field : parent + "." + field;
    }

    /** Whether {@code n} holds a value (neither absent nor {@code null}). */
    public static boolean given(JsonNode n) {
        return !n.isMissingNode() && !n.isNull();
    }

    /** {@code n} as an object (an array element, say); anything else is refused naming {@code path}. */
    public static ObjectNode object(JsonNode n, String path) throws InvalidRequest {
        if (n instanceof ObjectNode o) {
            return o;
        }
        throw new InvalidRequest(path + ": expected an object.");
    }

    /** {@code n} as a string that must be there ({@code text} of a text block, say). */
    public static String text(JsonNode n, String path) throws InvalidRequest {
        if (!n.isTextual()) {
            throw new InvalidRequest(path + ": expected a string.");
        }
        return n.asText();
    }

    /** The string at {@code in.field}, null when not given. */
    public static @Nullable String optionalText(JsonNode in, String field, String parent) throws InvalidRequest {
        JsonNode n = in.path(field);
        if (!given(n)) {
            return null;
        }
        return text(n, path(parent, field));
    }

    /** The boolean at {@code in.field}, {@code otherwise} when not given. */
    public static boolean optionalBoolean(JsonNode in, String field, String parent, boolean otherwise)
            throws InvalidRequest {
        JsonNode n = in.path(field);
        if (!given(n)) {
            return otherwise;
        }
        if (!n.isBoolean()) {
            throw new InvalidRequest(path(parent, field) + ": expected a boolean.");
        }
        return n.booleanValue();
    }

    /** The object at {@code in.field}, null when not given. */
    public static @Nullable ObjectNode optionalObject(JsonNode in, String field, String parent) throws InvalidRequest {
        JsonNode n = in.path(field);
        return given(n) ? object(n, path(parent, field)) : null;
    }

    /** The array at {@code in.field}, null when not given. */
    public static @Nullable ArrayNode optionalArray(JsonNode in, String field, String parent) throws InvalidRequest {
        JsonNode n = in.path(field);
        if (!given(n)) {
            return null;
        }
        if (n instanceof ArrayNode a) {
            return a;
        }
        throw new InvalidRequest(path(parent, field) + ": expected an array.");
    }
}
