package dev.continuum.router.kv.prompt;

import com.hubspot.jinjava.Jinjava;
import com.hubspot.jinjava.JinjavaConfig;
import com.hubspot.jinjava.LegacyOverrides;
import com.hubspot.jinjava.el.JinjavaInterpreterResolver;
import com.hubspot.jinjava.el.JinjavaNodePreProcessor;
import com.hubspot.jinjava.interpret.Context;
import com.hubspot.jinjava.interpret.InterpreterFactory;
import com.hubspot.jinjava.interpret.JinjavaInterpreter;
import com.hubspot.jinjava.interpret.RenderResult;
import com.hubspot.jinjava.interpret.TemplateError;
import com.hubspot.jinjava.lib.fn.ELFunctionDefinition;
import com.hubspot.jinjava.el.TruthyTypeConverter;
import com.hubspot.jinjava.tree.Node;
import java.util.concurrent.ConcurrentHashMap;
import java.io.IOException;
import java.util.Properties;
import jinjava.de.odysseus.el.ExpressionFactoryImpl;
import jinjava.de.odysseus.el.tree.TreeBuilder;
import jinjava.javax.el.ExpressionFactory;
import java.util.Map;
import java.util.Set;
import jinjava.javax.el.CompositeELResolver;

/**
 * jinjava configured to render Hugging Face chat templates as transformers' Jinja2 environment does
 * ({@code trim_blocks}, {@code lstrip_blocks}, no trailing newline kept, loop controls, {@code raise_exception},
 * {@code strftime_now}, transformers' {@code tojson}, Python's string methods), with no template loader
 * ({@code include}, {@code import}, {@code from} and {@code extends} are disabled and any file lookup fails),
 * and bounded: strings and output up to the rendered-text cap, lists and maps, ranges, macro recursion, and a
 * per-node hook that charges the render's {@link RenderBudget}. docs/kv-prompt.md lists where jinjava and
 * Jinja2 still differ.
 */
final class TemplateEngine {
    /** Jinja2 sandboxes have no loader; templates that try one are refused rather than half-rendered. */
    private static final Set<String> LOADER_TAGS = Set.of("include", "import", "from", "extends");
    /** Lists and maps a template may build: larger than any prompt needs, small enough to bound the heap. */
    private static final int MAX_COLLECTION = 100_000;

    /** Distinct templates whose parse is kept; more (a churn of artifact sets) clears the map and starts over. */
    static final int MAX_PARSED = 64;

    private final Jinjava jinjava;
    private final int maxChars;
    /**
     * Template as given -> its Jinja2-adjusted source, and that source -> its parsed tree: a template is prepared
     * and parsed once, not per render (jinjava's trees are not changed by rendering them).
     */
    private final ConcurrentHashMap<String, String> sources = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, Node> parsed = new ConcurrentHashMap<>();

    TemplateEngine(PromptLimits limits) {
        this.maxChars = limits.maxRenderedBytes();
        CompositeELResolver resolver = new CompositeELResolver();
        resolver.add(new PyStringResolver(maxChars));
        resolver.add(JinjavaInterpreterResolver.DEFAULT_RESOLVER_READ_ONLY);
        JinjavaNodePreProcessor standard = new JinjavaNodePreProcessor();
        JinjavaConfig config = JinjavaConfig.newBuilder()
                .withTrimBlocks(true)
                // lstrip_blocks is applied to the source (lstripBlocks below): jinjava's own strips the
                // whitespace before every block tag, where Jinja2 strips it only when it starts the line.
                .withLstripBlocks(false)
                // Jinja2 drops one trailing newline of the template source (done in render); jinjava's option
                // would drop one of the output instead, which is the template's own text.
                .withKeepTrailingNewline(true)
                .withMaxOutputSize(maxChars)
                .withMaxStringLength(maxChars)
                .withMaxListSize(MAX_COLLECTION)
                .withMaxMapSize(MAX_COLLECTION)
                .withRangeLimit(MAX_COLLECTION)
                .withEnableRecursiveMacroCalls(true)
                .withMaxMacroRecursionDepth(limits.maxMacroDepth())
                .withNestedInterpretationEnabled(false)
                .withFailOnUnknownTokens(false)
                .withElResolver(resolver)
                .withInterperterFactory(new ParsedOnce())
                .withExecutionMode(PyOutput.MODE)
                .withDisabled(Map.of(Context.Library.TAG, LOADER_TAGS))
                .withNodePreProcessor((node, interpreter) -> {
                    standard.accept(node, interpreter);
                    RenderBudget.chargeCurrent();
                })
                .withLegacyOverrides(LegacyOverrides.newBuilder()
                        .withUseNaturalOperatorPrecedence(true)
                        .withParseWhitespaceControlStrictly(true)
                        .withKeepNullableLoopValues(true)
                        .withHandleBackslashInQuotesOnly(true)
                        .withUseTrimmingForNotesAndExpressions(true)
                        .build())
                .build();
        jinjava = new HfJinjava(config);
        jinjava.setResourceLocator((name, charset, interpreter) -> {
            throw new IOException("templates cannot load files");
        });
        jinjava.registerFilter(new ToJsonFilter(maxChars));
        jinjava.registerFunction(new ELFunctionDefinition("", "raise_exception", TemplateFunctions.class,
                "raiseException", Object.class));
        jinjava.registerFunction(new ELFunctionDefinition("", "strftime_now", TemplateFunctions.class,
                "strftimeNow", String.class));
    }

    /**
     * jinjava reports as errors, and renders on past, what Jinja2 raises for; only an unknown name or attribute
     * (Jinja2's lenient {@code Undefined}, which renders as nothing) is let through.
     */
    private static void throwIfJinja2Raises(TemplateError error) {
        TemplateError.ErrorReason reason = error.getReason();
        if (reason == TemplateError.ErrorReason.UNKNOWN && error.getSeverity() != TemplateError.ErrorType.FATAL) {
            return;
        }
        String message = "template error (" + reason + "): " + error.getMessage();
        if (reason == TemplateError.ErrorReason.OUTPUT_TOO_BIG
                || reason == TemplateError.ErrorReason.COLLECTION_TOO_BIG
                || String.valueOf(error.getMessage()).contains("OutputTooBigException")) {
            throw new TemplateFailure.TooLarge(message);
        }
        throw new TemplateFailure(message);
    }

    /** The template as Jinja2 lexes it with {@code keep_trailing_newline=False}: one final newline removed. */
    static String jinja2Source(String template) {
        int n = template.length();
        if (n == 0) {
            return template;
        }
        char last = template.charAt(n - 1);
        if (last == '\n' && n >= 2 && template.charAt(n - 2) == '\r') {
            return template.substring(0, n - 2);
        }
        return last == '\n' || last == '\r' ? template.substring(0, n - 1) : template;
    }

    /**
     * Jinja2's {@code lstrip_blocks}: the spaces and tabs between the start of a line and a block tag
     * ({@code {%}) or comment ({@code {#}) are removed; {@code {%+} keeps them (and becomes {@code {%}, which
     * jinjava reads).
     */
    static String lstripBlocks(String template) {
        StringBuilder out = null;
        int copied = 0;
        for (int i = template.indexOf('{'); i >= 0 && i + 1 < template.length(); i = template.indexOf('{', i + 1)) {
            char next = template.charAt(i + 1);
            if (next != '%' && next != '#') {
                continue;
            }
            if (out == null) {
                out = new StringBuilder(template.length());
            }
            if (next == '%' && i + 2 < template.length() && template.charAt(i + 2) == '+') {
                out.append(template, copied, i + 2);
                copied = i + 3;
                continue;
            }
            int lineStart = i;
            while (lineStart > copied && (template.charAt(lineStart - 1) == ' ' || template.charAt(lineStart - 1) == '\t')) {
                lineStart--;
            }
            boolean startsLine = lineStart == 0 || template.charAt(lineStart - 1) == '\n'
                    || template.charAt(lineStart - 1) == '\r';
            out.append(template, copied, startsLine ? lineStart : i);
            copied = i;
        }
        if (out == null) {
            return template;
        }
        return out.append(template, copied, template.length()).toString();
    }

    /** Interpreters whose {@code parse} answers from {@link #parsed} (a parse with errors is never kept). */
    private final class ParsedOnce implements InterpreterFactory {
        @Override
        public JinjavaInterpreter newInstance(JinjavaInterpreter orig) {
            return new CachingInterpreter(orig);
        }

        @Override
        public JinjavaInterpreter newInstance(Jinjava jinjava, Context context, JinjavaConfig config) {
            return new CachingInterpreter(jinjava, context, config);
        }
    }

    private final class CachingInterpreter extends JinjavaInterpreter {
        CachingInterpreter(JinjavaInterpreter orig) {
            super(orig);
        }

        CachingInterpreter(Jinjava jinjava, Context context, JinjavaConfig config) {
            super(jinjava, context, config);
        }

        @Override
        public Node parse(String template) {
            Node tree = parsed.get(template);
            if (tree != null) {
                return tree;
            }
            int errors = getErrors().size();
            tree = super.parse(template);
            if (getErrors().size() == errors) {
                remember(parsed, template, tree);
            }
            return tree;
        }
    }

    private static <V> void remember(ConcurrentHashMap<String, V> map, String key, V value) {
        if (map.size() >= MAX_PARSED) {
            map.clear();
        }
        map.putIfAbsent(key, value);
    }

    /** jinjava whose expressions parse with {@link HfSyntaxBuilder}. */
    private static final class HfJinjava extends Jinjava {
        private final ExpressionFactory expressions;

        HfJinjava(JinjavaConfig config) {
            super(config);
            Properties properties = new Properties();
            properties.setProperty(TreeBuilder.class.getName(), HfSyntaxBuilder.class.getName());
            expressions = new ExpressionFactoryImpl(properties, new TruthyTypeConverter());
        }

        @Override
        public ExpressionFactory getExpressionFactory() {
            return expressions;
        }
    }

    /**
     * Renders {@code template} with {@code bindings} under {@code budget}.
     *
     * @throws TemplateFailure when the template raised, failed, or exceeded a bound
     */
    String render(String template, Map<String, Object> bindings, RenderBudget budget) {
        String source = sources.get(template);
        if (source == null) {
            source = lstripBlocks(jinja2Source(template));
            remember(sources, template, source);
        }
        String prepared = source;
        RenderResult result = budget.run(() -> jinjava.renderForResult(prepared, bindings));
        budget.rethrowFailure();
        for (TemplateError error : result.getErrors()) {
            throwIfJinja2Raises(error);
        }
        String output = result.getOutput();
        if (output.length() > maxChars) {
            throw new TemplateFailure.TooLarge("rendered prompt longer than " + maxChars + " characters");
        }
        return output;
    }
}
