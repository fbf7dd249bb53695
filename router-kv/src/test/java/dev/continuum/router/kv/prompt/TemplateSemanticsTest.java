package dev.continuum.router.kv.prompt;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Jinja features chat templates lean on, one snippet each, rendered by our engine and by Jinja2 configured
 * as transformers configures it (Debian's python3-jinja2, run once for all snippets): the texts must be equal,
 * and a snippet Jinja2 refuses must fail with us too.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class TemplateSemanticsTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    static Path tmp;

    /** template, variables as JSON. */
    private static final List<String[]> SNIPPETS = List.of(
            // whitespace control
            new String[] {"a {% if true %}b{% endif %} c\n  {% if true %}x{% endif %}\n  y {{ 1 }}", "{}"},
            new String[] {"{% for m in xs %}\n  {{ m }}\n{% endfor %}\n", "{\"xs\":[1,2]}"},
            new String[] {"  {%- if true %} a {% endif -%}  \n b {#- note -#} c\n", "{}"},
            new String[] {"  {%+ if true %}k{% endif %}\n\t{# c #}\n{% if true %}\nq{% endif %}", "{}"},
            // subscripts, slices, keyword arguments
            new String[] {"{{ xs[-1] }} {{ xs[1:] }} {{ xs[:-1] }} {{ xs[::-1] }} {{ xs[::2] }} {{ s[1:-1] }}",
                "{\"xs\":[1,2,3,4],\"s\":\"hello\"}"},
            new String[] {"{% set ns = namespace(i=xs|length - 1, found=false) %}{% for x in xs %}"
                + "{% if x > 2 and not ns.found %}{% set ns.found = true %}{% set ns.i = loop.index0 %}{% endif %}"
                + "{% endfor %}{{ ns.i }} {{ ns.found }}", "{\"xs\":[1,2,3,4]}"},
            // loops
            new String[] {"{% for x in xs %}{% if x == 2 %}{% continue %}{% endif %}{% if x == 4 %}{% break %}"
                + "{% endif %}{{ loop.index }}:{{ x }}{% if not loop.last %},{% endif %}{% endfor %}",
                "{\"xs\":[1,2,3,4,5]}"},
            new String[] {"{% for m in messages %}{{ loop.first }}{{ loop.last }}{{ loop.length }}|{% endfor %}",
                "{\"messages\":[{},{}]}"},
            // string methods
            new String[] {"{{ s.startswith('<tool') }} {{ s.endswith('>') }} {{ s.split('</think>')[-1].lstrip('\\n') }}"
                + " {{ s.split('</think>')[0].rstrip('\\n').split('<think>')[-1] }}",
                "{\"s\":\"<think>\\nhm\\n</think>\\n\\nanswer>\"}"},
            new String[] {"[{{ s.strip() }}][{{ s.strip(' x') }}][{{ s.split() }}][{{ s.split(' ', 1) }}]",
                "{\"s\":\"  x a  b\\u00a0c x \"}"},
            new String[] {"{{ s.upper() }} {{ s.lower() }} {{ s.title() }} {{ s.replace('o', '0') }} {{ s.capitalize() }}",
                "{\"s\":\"hello wORLD o'neil straße\"}"},
            // tests
            new String[] {"{{ a is string }} {{ b is string }} {{ c is none }} {{ d is defined }} {{ e is false }}"
                + " {{ a is not none }} {{ 'x' in a }}", "{\"a\":\"xyz\",\"b\":1,\"c\":null,\"e\":false}"},
            // tojson as transformers defines it
            new String[] {"{{ v|tojson }}\n{{ v|tojson(indent=2) }}\n{{ v|tojson(sort_keys=true) }}\n{{ v|tojson(ensure_ascii=true) }}",
                "{\"v\":{\"b\":[1,2.5,-0.0001,1e+20,true,null],\"a\":\"é \\\"q\\\" \\\\ \\n\\t\\u0001 🤖\",\"c\":{}}}"},
            new String[] {"{{ v|tojson(separators=[',', ':']) }}", "{\"v\":{\"a\":[1,{\"b\":2}]}}"},
            // dict access and iteration
            new String[] {"{% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %} {{ d.get('a') }} {{ d['b'] }}",
                "{\"d\":{\"a\":1,\"b\":\"two\"}}"},
            new String[] {"{{ d.missing }}|{{ d.get('missing', 'dflt') }}|{{ (xs|first) }}{{ xs|last }}{{ xs|join('-') }}",
                "{\"d\":{},\"xs\":[1,2,3]}"},
            // raise_exception fails the render
            new String[] {"{% if xs|length > 1 %}{{ raise_exception('only one') }}{% endif %}", "{\"xs\":[1,2]}"},
            // filters common in templates
            new String[] {"{{ s|trim }}|{{ xs|length }}|{{ s|length }}|{{ xs|map(attribute='n')|join(',') }}"
                + "|{{ xs|selectattr('n', 'equalto', 2)|list|length }}", "{\"s\":\" t \",\"xs\":[{\"n\":1},{\"n\":2}]}"});

    private final Map<Integer, JsonNode> expected = new LinkedHashMap<>();
    private final TemplateEngine engine = new TemplateEngine(PromptLimits.defaults());

    @BeforeAll
    void renderWithJinja2() throws Exception {
        var request = JSON.createArrayNode();
        for (String[] s : SNIPPETS) {
            request.addObject().put("template", s[0]).set("vars", JSON.readTree(s[1]));
        }
        Path in = tmp.resolve("snippets.json");
        JSON.writeValue(in.toFile(), request);
        Path script = tmp.resolve("jinja2_snippets.py");
        try (InputStream r = Objects.requireNonNull(getClass().getResourceAsStream("/prompt/jinja2_snippets.py"))) {
            Files.write(script, r.readAllBytes());
        }
        Path out = tmp.resolve("out.json");
        Process p = new ProcessBuilder("/usr/bin/python3", script.toString()).redirectInput(in.toFile())
                .redirectOutput(out.toFile()).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).isZero();
        JsonNode answers = JSON.readTree(out.toFile());
        for (int i = 0; i < answers.size(); i++) {
            expected.put(i, answers.get(i));
        }
    }

    @TestFactory
    Stream<DynamicTest> eachSnippetRendersAsJinja2RendersIt() {
        return IntStream.range(0, SNIPPETS.size()).mapToObj(i -> DynamicTest.dynamicTest(SNIPPETS.get(i)[0], () -> {
            @SuppressWarnings("unchecked")
            Map<String, Object> vars = JSON.readValue(SNIPPETS.get(i)[1], Map.class);
            JsonNode want = expected.get(i);
            RenderBudget budget = new RenderBudget(1_000_000, 64 << 20, System.nanoTime() + 10_000_000_000L,
                    System::nanoTime);
            if (want.has("error")) {
                org.assertj.core.api.Assertions.assertThatThrownBy(() -> engine.render(SNIPPETS.get(i)[0], vars, budget))
                        .as("Jinja2 raised " + want.get("error").asText()).isInstanceOf(TemplateFailure.class);
            } else {
                assertThat(engine.render(SNIPPETS.get(i)[0], vars, budget)).isEqualTo(want.get("text").asText());
            }
        }));
    }
}
