package dev.continuum.router.kv.prompt;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.continuum.router.kv.hash.ByteBoundedCache;
import dev.continuum.router.kv.hash.PromptPrefix;
import dev.continuum.router.kv.hash.Sightings;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * Render once: a conversation's earlier messages are rendered and tokenized on the turn that first sends them,
 * and later turns reuse that work from the {@link RenderCache}, rendering only their new messages.
 *
 * <p>A new turn cannot be rendered on its own: a template reads the whole message list (the first message's role,
 * the last user query, the neighbours of a tool result). So the new messages are rendered behind a stand-in for the
 * prefix, its first and last message: with {@code D} that stand-in and {@code S} the new messages, the new text is
 * {@code render(D + S) - render(D)} and the generation prompt is what {@code add_generation_prompt} adds to
 * {@code render(D + S)}. Whether that gives exactly the whole render is a property of the template, found at load
 * by probes ({@link #shape}): for each role a prefix may end with, whether a prefix's render is the whole render
 * without its generation prompt, and for each pair of roles meeting at the cut, whether the stand-in's delta equals
 * the whole render's continuation. A cut the probes did not show stable renders whole, as without the cache.
 *
 * <p>Token IDs are joined only where the tokenizer's segments allow ({@link AddedTokens#joinsCleanly}): a prefix's
 * IDs followed by the new text's IDs are the whole text's IDs when the new text starts with an added token that
 * no token crosses, and the tokenizer passed the segment check at load.
 */
final class PrefixRender {
    /** Renders {@code messages} with the request's tools and kwargs ({@code prompt}), with or without the generation prompt. */
    interface Renderer {
        String render(String template, ChatTemplates templates, List<Object> messages, ChatPrompt prompt,
                      boolean generationPrompt, long deadlineNanos);
    }

    /** Where the render cache reports (metrics). */
    interface Stats {
        void lookup(boolean hit);

        Stats NONE = hit -> { };
    }

    /**
     * What the probes found for one template.
     *
     * @param identity a digest of the template and the special tokens it sees (the first link of every key)
     * @param ends     roles a cached prefix may end with
     * @param joins    {@code "last>next"} role pairs a cached prefix may be continued at
     */
    record Shape(byte[] identity, Set<String> ends, Set<String> joins) {
        boolean cuttable() {
            return !ends.isEmpty();
        }
    }

    private final RenderCache cache;
    private final Sightings sightings;
    private final Renderer renderer;
    private final Stats stats;

    /**
     * @param sightings the conversations rendered whole once: once the cache is full, one is cached from its
     *                  second turn (or a repeat of its first), so that single-turn traffic cannot churn the cache
     */
    PrefixRender(RenderCache cache, Sightings sightings, Renderer renderer, Stats stats) {
        this.cache = cache;
        this.sightings = sightings;
        this.renderer = renderer;
        this.stats = stats;
    }

    boolean enabled() {
        return cache.enabled();
    }

    /**
     * The key of every prefix of the body's messages: entry {@code k} (two longs) is the key of messages
     * {@code 0..k-1}, a SHA-256 chain from the template's identity, the tools' and kwargs' bytes, then each
     * message's bytes as the client sent them (the first 128 bits of each link).
     */
    static long[] keys(Shape shape, byte[] body, ChatPrompt.Spans spans) {
        MessageDigest md = SegmentedTokenizer.sha256();
        md.update(shape.identity());
        update(md, body, spans.tools());
        update(md, body, spans.kwargs());
        byte[] link = md.digest();
        long[] keys = new long[2 * (spans.messages().length + 1)];
        keys[0] = SegmentedTokenizer.longAt(link, 0);
        keys[1] = SegmentedTokenizer.longAt(link, 8);
        for (int i = 0; i < spans.messages().length; i++) {
            md.reset();
            md.update(link, 0, 16);
            long span = spans.messages()[i];
            md.update(body, ChatPrompt.from(span), ChatPrompt.to(span) - ChatPrompt.from(span));
            link = md.digest();
            keys[2 * i + 2] = SegmentedTokenizer.longAt(link, 0);
            keys[2 * i + 3] = SegmentedTokenizer.longAt(link, 8);
        }
        return keys;
    }

    private static void update(MessageDigest md, byte[] body, long span) {
        if (span < 0) {
            md.update((byte) 0);
            return;
        }
        md.update((byte) 1);
        md.update(body, ChatPrompt.from(span), ChatPrompt.to(span) - ChatPrompt.from(span));
        md.update((byte) 0xFF);
    }

    private static ByteBoundedCache.Key key(long[] keys, int k) {
        return new ByteBoundedCache.Key(keys[2 * k], keys[2 * k + 1]);
    }

    /** The tokens of a prompt whose earlier messages were cached, or null (render it whole). */
    PromptEncoding.@Nullable Tokens reuse(Shape shape, AddedTokens added, PromptTokenizer tokenizer, String template,
                                          ChatTemplates templates, ChatPrompt prompt, long[] keys, PromptLimits limits,
                                          long deadlineNanos) {
        List<Object> messages = prompt.messages();
        int n = messages.size();
        for (int k = n; k >= 1; k--) {
            RenderCache.Prefix cached = cache.get(key(keys, k));
            if (cached == null) {
                continue;
            }
            stats.lookup(true);
            String last = role(messages.get(k - 1));
            if (k < n && !shape.joins().contains(last + ">" + role(messages.get(k)))) {
                return null;
            }
            return continueFrom(cached, k, added, tokenizer, template, templates, prompt, keys, limits,
                    deadlineNanos);
        }
        stats.lookup(false);
        return null;
    }

    private PromptEncoding.@Nullable Tokens continueFrom(RenderCache.Prefix cached, int k, AddedTokens added,
            PromptTokenizer tokenizer, String template, ChatTemplates templates, ChatPrompt prompt, long[] keys,
            PromptLimits limits, long deadlineNanos) {
        List<Object> messages = prompt.messages();
        int n = messages.size();
        List<Object> standIn = standIn(messages, k);
        List<Object> extended = new ArrayList<>(standIn);
        extended.addAll(messages.subList(k, n));
        String before = renderer.render(template, templates, standIn, prompt, false, deadlineNanos);
        String after = k == n ? before : renderer.render(template, templates, extended, prompt, false, deadlineNanos);
        String withPrompt = renderer.render(template, templates, extended, prompt, true, deadlineNanos);
        if (!after.startsWith(before) || !withPrompt.startsWith(after)) {
            return null;
        }
        String delta = after.substring(before.length());
        String generation = withPrompt.substring(after.length());
        String tail = cached.tail();
        if (!delta.isEmpty()) {
            if (!added.joinsCleanly(tail, delta)) {
                return null;
            }
            tail = tail(tail + delta, added.maxLength());
        }
        if (!generation.isEmpty() && !added.joinsCleanly(tail, generation)) {
            return null;
        }
        long utf8 = (long) cached.utf8Bytes() + Utf8.length(delta) + Utf8.length(generation);
        if (utf8 > limits.maxRenderedBytes()) {
            throw new TemplateFailure.TooLarge("rendered prompt of " + utf8 + " bytes");
        }
        int[] deltaIds = delta.isEmpty() ? new int[0] : tokenizer.encode(delta, limits.maxTokens());
        int[] generationIds = generation.isEmpty() ? new int[0] : tokenizer.encode(generation, limits.maxTokens());
        long total = (long) cached.ids().length + deltaIds.length + generationIds.length;
        if (total > limits.maxTokens()) {
            throw new TemplateFailure.TooLarge("prompt of " + total + " tokens (at most " + limits.maxTokens() + ")");
        }
        int[] ids = Arrays.copyOf(cached.ids(), (int) total);
        System.arraycopy(deltaIds, 0, ids, cached.ids().length, deltaIds.length);
        System.arraycopy(generationIds, 0, ids, cached.ids().length + deltaIds.length, generationIds.length);
        int prefixTokens = cached.ids().length + deltaIds.length;
        if (k < n) {
            cache.put(key(keys, n), new RenderCache.Prefix(Arrays.copyOf(ids, prefixTokens),
                    (int) (cached.utf8Bytes() + Utf8.length(delta)), tail));
        }
        return new PromptEncoding.Tokens(ids, new PromptPrefix(key(keys, k), cached.ids().length, key(keys, n),
                prefixTokens));
    }

    /**
     * After a whole render: caches the prompt without its generation prompt as the prefix of the conversation's
     * next turn, when the template's probes allow a cut after the last message's role, and either the cache has
     * room or the conversation was seen before (an earlier turn of it, or this very body, rendered whole once:
     * {@link #seenBefore}). Returns the prefix now known (for the block hashes), or null.
     */
    @Nullable PromptPrefix remember(Shape shape, AddedTokens added, PromptTokenizer tokenizer, String template,
                                    ChatTemplates templates, ChatPrompt prompt, long[] keys, String text, int utf8Bytes,
                                    int[] ids, PromptLimits limits, long deadlineNanos) {
        List<Object> messages = prompt.messages();
        int n = messages.size();
        if (!shape.ends().contains(role(messages.get(n - 1))) || !(seenBefore(keys, n) || cache.hasRoom())) {
            return null;
        }
        List<Object> standIn = standIn(messages, n);
        String before = renderer.render(template, templates, standIn, prompt, false, deadlineNanos);
        String withPrompt = renderer.render(template, templates, standIn, prompt, true, deadlineNanos);
        if (!withPrompt.startsWith(before)) {
            return null;
        }
        String generation = withPrompt.substring(before.length());
        if (!text.endsWith(generation)) {
            return null;
        }
        int prefixLength = text.length() - generation.length();
        String tail = text.substring(Math.max(0, prefixLength - added.maxLength()), prefixLength);
        int[] generationIds = new int[0];
        if (!generation.isEmpty()) {
            if (!added.joinsCleanly(tail, generation)) {
                return null;
            }
            generationIds = tokenizer.encode(generation, limits.maxTokens());
            if (generationIds.length > ids.length || !Arrays.equals(ids, ids.length - generationIds.length,
                    ids.length, generationIds, 0, generationIds.length)) {
                return null;
            }
        }
        int prefixTokens = ids.length - generationIds.length;
        cache.put(key(keys, n), new RenderCache.Prefix(Arrays.copyOf(ids, prefixTokens),
                utf8Bytes - Utf8.length(generation), tail));
        return new PromptPrefix(null, 0, key(keys, n), prefixTokens);
    }

    /**
     * Whether a conversation of {@code n} messages was rendered whole before, as itself or as an earlier turn (one
     * of its prefixes); records it either way. The admission rule of the render cache: a conversation's first
     * turn is only noted, and the turn after it is cached for the turns that follow.
     */
    private boolean seenBefore(long[] keys, int n) {
        if (sightings.sawBefore(key(keys, n))) {
            return true;
        }
        for (int k = n - 1; k >= 1; k--) {
            if (sightings.contains(key(keys, k))) {
                return true;
            }
        }
        return false;
    }

    /** The stand-in for messages {@code 0..k-1}: the first and the last of them. */
    static List<Object> standIn(List<Object> messages, int k) {
        return k == 1 ? List.of(messages.get(0)) : List.of(messages.get(0), messages.get(k - 1));
    }

    static String role(Object message) {
        return message instanceof Map<?, ?> m && m.get("role") instanceof String r ? r : "?";
    }

    private static String tail(String text, int length) {
        return text.length() <= length ? text : text.substring(text.length() - length);
    }

    // ---- the probes ----

    /** Conversations the shape is probed with: every role after every other, reasoning, tool calls and results. */
    private static final String PROBES = """
            [[{"role":"system","content":"Be brief. Température 21 °C."},
              {"role":"user","content":"Hi, what is a radix tree?"},
              {"role":"assistant","content":"A compressed trie."},
              {"role":"user","content":"And 東京?"},
              {"role":"assistant","content":"<think>\\nThe user asks.\\n</think>\\n\\nA city."},
              {"role":"user","content":"Thanks 🚀"}],
             [{"role":"user","content":"One"},
              {"role":"assistant","content":"Two","reasoning_content":"count"},
              {"role":"user","content":"Three"}],
             [{"role":"system","content":"Use tools."},
              {"role":"user","content":"Weather in Paris and Oslo?"},
              {"role":"assistant","content":"","tool_calls":[
                {"type":"function","function":{"name":"get_weather","arguments":{"city":"Paris"}}},
                {"type":"function","function":{"name":"get_weather","arguments":"{\\"city\\": \\"Oslo\\"}"}}]},
              {"role":"tool","content":"21 C"},
              {"role":"tool","content":"12 C"},
              {"role":"assistant","content":"Paris 21 C, Oslo 12 C."},
              {"role":"user","content":"And tomorrow?"},
              {"role":"assistant","content":"<think>\\nplan\\n</think>\\n\\n","tool_calls":[
                {"type":"function","function":{"name":"get_weather","arguments":{"city":"Paris","day":1}}}]},
              {"role":"tool","content":"19 C"}]]
            """;
    private static final String PROBE_TOOLS = """
            [{"type":"function","function":{"name":"get_weather","description":"Weather of a city.",
              "parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}]
            """;

    /**
     * Probes {@code template} (with and without tools): which roles a prefix may end with, which role pairs it may
     * be continued at. A render that fails marks the cut unstable; a template the probes cannot render at all
     * is never cut.
     */
    @SuppressWarnings("unchecked")
    static Shape shape(ObjectMapper mapper, Renderer renderer, String template, ChatTemplates templates,
                       byte[] identity, long deadlineNanos) {
        Set<String> ends = new HashSet<>();
        Set<String> joins = new HashSet<>();
        Set<String> badEnds = new HashSet<>();
        Set<String> badJoins = new HashSet<>();
        try {
            List<Object> probes = mapper.readValue(PROBES, List.class);
            List<Object> tools = mapper.readValue(PROBE_TOOLS, List.class);
            for (List<Object> withTools : java.util.Arrays.<List<Object>>asList(null, tools)) {
                for (Object p : probes) {
                    ChatPrompt prompt = new ChatPrompt((List<Object>) p, withTools, Map.of(), ChatPrompt.Spans.NONE);
                    probe(renderer, template, templates, prompt, deadlineNanos, ends, joins, badEnds, badJoins);
                }
            }
        } catch (java.io.IOException e) {
            throw new IllegalStateException("the probe conversations are valid JSON", e);
        }
        ends.removeAll(badEnds);
        joins.removeAll(badJoins);
        joins.removeIf(j -> !ends.contains(j.substring(0, j.indexOf('>'))));
        return new Shape(identity.clone(), Set.copyOf(ends), Set.copyOf(joins));
    }

    private static void probe(Renderer r, String template, ChatTemplates templates, ChatPrompt prompt,
                              long deadline, Set<String> ends, Set<String> joins, Set<String> badEnds,
                              Set<String> badJoins) {
        List<Object> all = prompt.messages();
        int n = all.size();
        String whole = tryRender(r, template, templates, all, prompt, true, deadline);
        for (int k = 1; k <= n; k++) {
            String last = role(all.get(k - 1));
            List<Object> head = all.subList(0, k);
            String headWithout = tryRender(r, template, templates, head, prompt, false, deadline);
            String headWith = tryRender(r, template, templates, head, prompt, true, deadline);
            List<Object> standIn = standIn(all, k);
            String before = tryRender(r, template, templates, standIn, prompt, false, deadline);
            String beforeWith = tryRender(r, template, templates, standIn, prompt, true, deadline);
            boolean endOk = headWithout != null && headWith != null && before != null && beforeWith != null
                    && beforeWith.startsWith(before)
                    && headWith.equals(headWithout + beforeWith.substring(before.length()));
            (endOk ? ends : badEnds).add(last);
            if (k == n) {
                continue;
            }
            String join = last + ">" + role(all.get(k));
            List<Object> extended = new ArrayList<>(standIn);
            extended.addAll(all.subList(k, n));
            String after = tryRender(r, template, templates, extended, prompt, false, deadline);
            String afterWith = tryRender(r, template, templates, extended, prompt, true, deadline);
            boolean joinOk = endOk && before != null && whole != null && after != null && afterWith != null
                    && after.startsWith(before)
                    && afterWith.startsWith(after)
                    && whole.equals(headWithout + after.substring(before.length())
                    + afterWith.substring(after.length()));
            (joinOk ? joins : badJoins).add(join);
        }
    }

    private static @Nullable String tryRender(Renderer r, String template, ChatTemplates templates,
                                              List<Object> messages, ChatPrompt prompt, boolean generation,
                                              long deadline) {
        try {
            return r.render(template, templates, messages, prompt, generation, deadline);
        } catch (RuntimeException e) { // TemplateFailure included
            return null;
        }
    }
}
