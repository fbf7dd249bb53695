package dev.continuum.router.discovery.reducer;

import static dev.continuum.router.discovery.reducer.JsonFields.field;
import static dev.continuum.router.discovery.reducer.JsonFields.nonEmptyText;
import static dev.continuum.router.discovery.reducer.JsonFields.unsignedId;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.continuum.router.discovery.DiscoveryEventKind;
import dev.continuum.router.discovery.DynamoPublisher;
import dev.continuum.router.discovery.ModelCard;
import dev.continuum.router.discovery.PublisherId;
import dev.continuum.router.discovery.PublisherTopic;
import dev.continuum.router.discovery.WorkerId;
import dev.continuum.router.discovery.reducer.HeldRecord.CardRecord;
import dev.continuum.router.discovery.reducer.HeldRecord.ChannelRecord;
import dev.continuum.router.discovery.reducer.HeldRecord.EndpointRecord;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * Parses one record value (already bounded by {@code MAX_RECORD_BYTES}) into what the reducer holds. Every
 * field is optional and unknown fields are ignored (Dynamo's N-2 window); only the fields the router uses are
 * materialized, the rest are skipped without building trees.
 */
final class RecordParser {
    private static final ObjectMapper MAPPER = new ObjectMapper();
    /** {@code tcp://host:port} or {@code tcp://[v6]:port}; the host may not be a wildcard. */
    private static final Pattern TCP_ENDPOINT = Pattern.compile("tcp://(\\[[0-9A-Fa-f:.]+\\]|[^\\s/:\\[\\]*@]+):(\\d{1,5})");
    private static final Pattern URL_SCHEME = Pattern.compile("[A-Za-z][A-Za-z0-9+.-]*://.*");
    private static final Set<String> ENDPOINT_FIELDS = Set.of("type", "instance_id", "component", "endpoint");
    private static final Set<String> CARD_FIELDS = Set.of("type", "instance_id", "component", "endpoint",
            "model_suffix", "card_json");
    private static final Set<String> CHANNEL_FIELDS = Set.of("type", "instance_id", "scope", "namespace",
            "component", "topic", "transport");

    private RecordParser() {
    }

    /** The outcome for one value. */
    sealed interface Result {
    }

    /**
     * @param unsupported why the router cannot subscribe to this channel (held, counted once), or null
     */
    record Parsed(HeldRecord record, @Nullable String unsupported) implements Result {
    }

    /** Not held: dropped, logged at warn and counted once per key under {@code kind}. */
    record Rejected(DiscoveryEventKind kind, String reason) implements Result {
    }

    /** Not held and not worth a log line (a topic or record type the router does not use). */
    record Skipped(String reason) implements Result {
    }

    private static final class CardSpan {
        long start = -1;
        long end = -1;
    }

    static Result parse(Keyspace keyspace, String namespace, String key, byte[] value, DiscoveryLimits limits,
                        StringInterner strings) {
        Set<String> wanted = switch (keyspace) {
            case INSTANCES -> ENDPOINT_FIELDS;
            case MODEL_CARDS -> CARD_FIELDS;
            case EVENT_CHANNELS -> CHANNEL_FIELDS;
        };
        Map<String, JsonNode> fields;
        CardSpan span = new CardSpan();
        try {
            fields = readTopLevel(value, wanted, span);
        } catch (IOException e) {
            return new Rejected(DiscoveryEventKind.MALFORMED, "not a JSON object: " + firstLine(e));
        }
        String type = text(fields.get("type"));
        return switch (keyspace) {
            case INSTANCES -> parseEndpoint(namespace, type, fields, strings);
            case MODEL_CARDS -> parseCard(namespace, key, type, fields, value, span, limits, strings);
            case EVENT_CHANNELS -> parseChannel(namespace, key, type, fields);
        };
    }

    private static Result parseEndpoint(String namespace, @Nullable String type, Map<String, JsonNode> fields,
                                        StringInterner strings) {
        if (type != null && !type.equals("Endpoint")) {
            return new Rejected(DiscoveryEventKind.MALFORMED, "record type \"" + type + "\" under v1/instances/");
        }
        Long instanceId = unsignedId(fields.get("instance_id"));
        if (instanceId == null) {
            return new Rejected(DiscoveryEventKind.MALFORMED, "endpoint record without a valid instance_id");
        }
        return new Parsed(new EndpointRecord(new WorkerId(namespace, instanceId),
                orEmpty(strings.intern(text(fields.get("component")))),
                orEmpty(strings.intern(text(fields.get("endpoint"))))), null);
    }

    private static Result parseCard(String namespace, String key, @Nullable String type, Map<String, JsonNode> fields,
                                    byte[] value, CardSpan span, DiscoveryLimits limits, StringInterner strings) {
        if (type != null && !type.equals("Model")) {
            return new Rejected(DiscoveryEventKind.MALFORMED, "record type \"" + type + "\" under v1/mdc/");
        }
        Long instanceId = unsignedId(fields.get("instance_id"));
        if (instanceId == null && fields.get("instance_id") == null) {
            // The wire reference's fallback: the hex segment after <ns>/<component>/<endpoint>/ in the key.
            instanceId = idFromCardKey(namespace, key);
        }
        if (instanceId == null) {
            return new Rejected(DiscoveryEventKind.MALFORMED, "model record without a valid instance_id");
        }
        JsonNode cardNode = fields.get("card_json");
        String raw = null;
        if (cardNode != null && cardNode.isTextual()) {
            // A card nested as a JSON string: keep the string verbatim, read the typed subset from its content.
            raw = cardNode.textValue();
            cardNode = readTreeOrNull(raw);
        } else if (cardNode != null && span.start >= 0 && span.end > span.start) {
            long length = span.end - span.start;
            if (length <= limits.maxRetainedCardBytes()) {
                raw = new String(value, (int) span.start, (int) length, StandardCharsets.UTF_8);
            }
        }
        if (raw != null && raw.length() > limits.maxRetainedCardBytes()) {
            raw = null;
        }
        ModelCard card = ModelCardParser.parse(cardNode, raw, strings);
        return new Parsed(new CardRecord(new WorkerId(namespace, instanceId),
                orEmpty(strings.intern(text(fields.get("component")))),
                orEmpty(strings.intern(text(fields.get("endpoint")))), nonEmptyOrNull(text(fields.get("model_suffix"))),
                card), null);
    }

    private static Result parseChannel(String namespace, String key, @Nullable String type,
                                       Map<String, JsonNode> fields) {
        if ("EventSource".equals(type)) {
            return new Skipped("EventSource records describe publishers, they are not channels");
        }
        if (type != null && !type.equals("EventChannel")) {
            return new Rejected(DiscoveryEventKind.MALFORMED,
                    "record type \"" + type + "\" under v1/event_channels/");
        }
        ChannelKey keyParts = ChannelKey.parse(key.substring(Keyspace.EVENT_CHANNELS.prefix(namespace).length()))
                .orElse(null);
        String topicName = text(fields.get("topic"));
        if (topicName == null && keyParts != null) {
            topicName = keyParts.topic();
        }
        if (topicName == null) {
            return new Rejected(DiscoveryEventKind.MALFORMED, "event channel without a topic");
        }
        Optional<PublisherTopic> topic = PublisherTopic.fromWire(topicName);
        if (topic.isEmpty()) {
            return new Skipped("topic " + topicName + " is not used by the router");
        }
        Long publisherId = unsignedId(fields.get("instance_id"));
        if (publisherId == null) {
            return new Rejected(DiscoveryEventKind.MALFORMED, "event channel without a valid instance_id");
        }
        PublisherId id = new PublisherId(namespace, publisherId);

        String component;
        String endpoint = null;
        JsonNode scope = fields.get("scope");
        if (scope != null) {
            String kind = text(scope, "kind");
            if ("namespace".equals(kind)) {
                component = null;
            } else if ("component".equals(kind)) {
                component = nonEmptyText(scope, "component");
            } else if ("endpoint".equals(kind)) {
                JsonNode ep = field(scope, "endpoint");
                component = nonEmptyText(ep, "component");
                endpoint = nonEmptyText(ep, "name");
            } else {
                return new Parsed(new ChannelRecord(id, topic.get(), null),
                        "unknown scope kind " + (kind == null ? "(none)" : "\"" + kind + "\""));
            }
        } else if (fields.containsKey("component") || fields.containsKey("namespace")) {
            // The older flat shape: namespace and component fields, component "" for namespace scope.
            component = nonEmptyOrNull(text(fields.get("component")));
        } else {
            component = keyParts == null ? null : keyParts.component();
            endpoint = keyParts == null ? null : keyParts.endpoint();
        }

        JsonNode transport = fields.get("transport");
        if (transport == null || !transport.isObject()) {
            return new Rejected(DiscoveryEventKind.MALFORMED, "event channel without a transport");
        }
        String transportKind = text(transport, "kind");
        if ("Nats".equals(transportKind)) {
            return natsChannel(id, topic.get(), component, endpoint, text(field(transport, "config"), "subject_prefix"));
        }
        if (!"Zmq".equals(transportKind)) {
            return new Parsed(new ChannelRecord(id, topic.get(), null), "transport "
                    + (transportKind == null ? "without a kind" : "\"" + transportKind + "\"")
                    + " (only direct Zmq and Nats channels are subscribed)");
        }
        String address = text(field(transport, "config"), "endpoint");
        if (address == null) {
            return new Rejected(DiscoveryEventKind.MALFORMED, "Zmq channel without config.endpoint");
        }
        if (!address.startsWith("tcp://")) {
            if (URL_SCHEME.matcher(address).matches()) {
                return new Parsed(new ChannelRecord(id, topic.get(), null),
                        "Zmq endpoint scheme is not tcp:// (only TCP publishers can be dialed)");
            }
            return new Rejected(DiscoveryEventKind.MALFORMED, "Zmq endpoint is not a URL");
        }
        var matcher = TCP_ENDPOINT.matcher(address);
        if (!matcher.matches() || Integer.parseInt(matcher.group(2)) == 0
                || Integer.parseInt(matcher.group(2)) > 65_535) {
            return new Rejected(DiscoveryEventKind.MALFORMED, "Zmq endpoint is not tcp://host:port");
        }
        return new Parsed(new ChannelRecord(id, topic.get(),
                new DynamoPublisher(id, topic.get(), component, endpoint, address)), null);
    }

    /** The longest NATS subject prefix accepted; upstream's are a few scope segments. */
    static final int MAX_SUBJECT_PREFIX_CHARS = 256;

    /**
     * A channel on the {@code Nats} transport (ai-dynamo/dynamo lib/runtime/src/discovery: {@code EventTransport}
     * kind {@code Nats}, config {@code subject_prefix}): subscribed at {@code {subject_prefix}.{topic}}. The prefix
     * must be literal dot-separated tokens: a wildcard or whitespace would widen or break the subscription.
     */
    private static Result natsChannel(PublisherId id, PublisherTopic topic, @Nullable String component,
                                      @Nullable String endpoint, @Nullable String prefix) {
        if (prefix == null || prefix.isEmpty() || prefix.length() > MAX_SUBJECT_PREFIX_CHARS) {
            return new Rejected(DiscoveryEventKind.MALFORMED,
                    "Nats channel without a config.subject_prefix of 1 to " + MAX_SUBJECT_PREFIX_CHARS + " characters");
        }
        boolean tokenStart = true;
        for (int i = 0; i < prefix.length(); i++) {
            char c = prefix.charAt(i);
            if (c == '.') {
                if (tokenStart) {
                    return new Rejected(DiscoveryEventKind.MALFORMED, "Nats subject_prefix has an empty token");
                }
                tokenStart = true;
            } else if (c <= ' ' || c >= 0x7f || c == '*' || c == '>') {
                return new Rejected(DiscoveryEventKind.MALFORMED,
                        "Nats subject_prefix is not literal printable ASCII tokens");
            } else {
                tokenStart = false;
            }
        }
        if (tokenStart) {
            return new Rejected(DiscoveryEventKind.MALFORMED, "Nats subject_prefix ends with a dot");
        }
        return new Parsed(new ChannelRecord(id, topic,
                new DynamoPublisher(id, topic, component, endpoint, DynamoPublisher.NATS_ADDRESS_PREFIX + prefix)), null);
    }

    private static Map<String, JsonNode> readTopLevel(byte[] value, Set<String> wanted, CardSpan span)
            throws IOException {
        Map<String, JsonNode> fields = new HashMap<>();
        try (JsonParser parser = MAPPER.createParser(value)) {
            if (parser.nextToken() != JsonToken.START_OBJECT) {
                throw new JsonProcessingException("the value is not a JSON object") {
                };
            }
            while (parser.nextToken() == JsonToken.FIELD_NAME) {
                String name = parser.currentName();
                parser.nextToken();
                if (!wanted.contains(name)) {
                    parser.skipChildren();
                    continue;
                }
                long start = parser.currentTokenLocation().getByteOffset();
                JsonNode node = parser.readValueAsTree();
                if ("card_json".equals(name)) {
                    span.start = start;
                    span.end = parser.currentLocation().getByteOffset();
                }
                if (node != null && !node.isNull()) {
                    fields.put(name, node);
                } else {
                    fields.remove(name);
                }
            }
            if (parser.currentToken() != JsonToken.END_OBJECT || parser.nextToken() != null) {
                throw new JsonProcessingException("trailing content after the JSON object") {
                };
            }
        }
        return fields;
    }

    private static @Nullable JsonNode readTreeOrNull(String json) {
        try {
            return MAPPER.readTree(json);
        } catch (IOException e) {
            return null;
        }
    }

    private static @Nullable Long idFromCardKey(String namespace, String key) {
        String rest = key.substring(Keyspace.MODEL_CARDS.prefix(namespace).length());
        String[] segments = rest.split("/", -1);
        return segments.length >= 3 ? JsonFields.parseHexId(segments[2]) : null;
    }

    private static @Nullable String text(@Nullable JsonNode node) {
        return node != null && node.isTextual() ? node.textValue() : null;
    }

    private static @Nullable String text(@Nullable JsonNode object, String name) {
        return JsonFields.text(object, name);
    }

    private static String orEmpty(@Nullable String value) {
        return value == null ? "" : value;
    }

    private static @Nullable String nonEmptyOrNull(@Nullable String value) {
        return value == null || value.isEmpty() ? null : value;
    }

    private static String firstLine(IOException e) {
        String message = e instanceof JsonProcessingException j ? String.valueOf(j.getOriginalMessage())
                : String.valueOf(e.getMessage());
        int newline = message.indexOf('\n');
        return newline < 0 ? message : message.substring(0, newline);
    }

    /**
     * The part of an event-channel key after {@code namespace/<ns>/}: optional {@code component/<c>/} and
     * {@code endpoint/<e>/}, then {@code topic/<t>/<id:x>}, each segment percent-decoded once.
     */
    record ChannelKey(@Nullable String component, @Nullable String endpoint, String topic, String idHex) {
        static Optional<ChannelKey> parse(String rest) {
            String[] s = rest.split("/", -1);
            int i = 0;
            String component = null;
            String endpoint = null;
            if (i + 1 < s.length && s[i].equals("component")) {
                component = Keyspace.decodeSegment(s[i + 1]).orElse(null);
                if (component == null) {
                    return Optional.empty();
                }
                i += 2;
                if (i + 1 < s.length && s[i].equals("endpoint")) {
                    endpoint = Keyspace.decodeSegment(s[i + 1]).orElse(null);
                    if (endpoint == null) {
                        return Optional.empty();
                    }
                    i += 2;
                }
            }
            if (i + 3 != s.length || !s[i].equals("topic")) {
                return Optional.empty();
            }
            Optional<String> topic = Keyspace.decodeSegment(s[i + 1]);
            if (topic.isEmpty()) {
                return Optional.empty();
            }
            return Optional.of(new ChannelKey(component, endpoint, topic.get(), s[i + 2]));
        }
    }
}
