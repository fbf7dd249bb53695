package dev.continuum.router.kv.prompt;

import com.hubspot.jinjava.Jinjava;
import com.hubspot.jinjava.JinjavaConfig;
import com.hubspot.jinjava.LegacyOverrides;
import com.hubspot.jinjava.el.JinjavaInterpreterResolver;
import com.hubspot.jinjava.el.JinjavaNodePreProcessor;
import com.hubspot.jinjava.interpret.Context;
import com.hubspot.jinjava.interpret.RenderResult;
import com.hubspot.jinjava.interpret.TemplateError;
import com.hubspot.jinjava.lib.fn.ELFunctionDefinition;
import com.hubspot.jinjava.el.TruthyTypeConverter;
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

    private final Jinjava jinjava;
    private final int maxChars;

    TemplateEngine(PromptLimits limits) {
        this.maxChars = limits.maxRenderedBytes();
        CompositeELResolver resolver = new CompositeELResolver();
        resolver.add(new PyStringResolver(maxChars));
        resolver.add(JinjavaInterpreterResolver.DEFAULT_RESOLVER_READ_ONLY);
        JinjavaNodePreProcessor standard = new JinjavaNodePreProcessor();
        JinjavaConfig config = JinjavaConfig.newBuilder()
                .withTrimBlocks(true)
                .withLstripBlocks(true)
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

    /** The template as Jinja2 lexes it with {@code keep_trailing_newline=False}: one final newline removed. */
    static String jinja2Source(String template) {
        if (template.endsWith("\r\n")) {
            return template.substring(0, template.length() - 2);
        }
        if (template.endsWith("\n") || template.endsWith("\r")) {
            return template.substring(0, template.length() - 1);
        }
        return template;
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
        String source = jinja2Source(template);
        RenderResult result = budget.run(() -> jinjava.renderForResult(source, bindings));
        budget.rethrowFailure();
        for (TemplateError error : result.getErrors()) {
            if (error.getSeverity() == TemplateError.ErrorType.FATAL) {
                throw new TemplateFailure("template error: " + error.getMessage());
            }
        }
        String output = result.getOutput();
        if (output.length() > maxChars) {
            throw new TemplateFailure.TooLarge("rendered prompt longer than " + maxChars + " characters");
        }
        return output;
    }
}
