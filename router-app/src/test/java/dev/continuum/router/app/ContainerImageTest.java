package dev.continuum.router.app;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.continuum.router.core.config.BindAddress;
import dev.continuum.router.core.config.LoadResult;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.junit.jupiter.api.Test;

/**
 * deploy/container without a container engine (none runs here): the Containerfile parsed into its
 * instructions and checked for what an engine would trip over or an operator would regret (a stage copied
 * from that does not exist, a source file that does not exist, root at run time, an entrypoint that names
 * another jar or config than the ones copied in), and its default config run through the router's own
 * validation: every interface, and a refusal to start without a real admin token.
 */
class ContainerImageTest {
    private static final Path ROOT = DeployFiles.repositoryRoot();
    private static final Path CONFIG = ROOT.resolve("deploy/container/config.yaml");

    /** One instruction: its keyword and its arguments, continuation lines joined. */
    record Instruction(String keyword, String args) {
    }

    static List<Instruction> parse(Path containerfile) throws IOException {
        List<Instruction> out = new ArrayList<>();
        StringBuilder current = new StringBuilder();
        for (String line : Files.readAllLines(containerfile)) {
            String trimmed = line.strip();
            if (current.isEmpty() && (trimmed.isEmpty() || trimmed.startsWith("#"))) {
                continue;
            }
            if (trimmed.endsWith("\\")) {
                current.append(trimmed, 0, trimmed.length() - 1).append(' ');
                continue;
            }
            current.append(trimmed);
            String text = current.toString();
            int space = text.indexOf(' ');
            out.add(new Instruction(text.substring(0, space), text.substring(space + 1).strip()));
            current.setLength(0);
        }
        assertThat(current).as("a continuation line at the end").isEmpty();
        return out;
    }

    @Test
    void theContainerfileBuildsANonRootImageThatRunsTheCopiedJarOnTheCopiedConfig() throws IOException {
        List<Instruction> all = parse(ROOT.resolve("deploy/container/Containerfile"));

        assertThat(all).extracting(Instruction::keyword).allMatch(k -> List.of("FROM", "RUN", "COPY", "ENV", "USER",
                "EXPOSE", "STOPSIGNAL", "ENTRYPOINT", "CMD").contains(k));
        List<String> stages = new ArrayList<>();
        int lastFrom = 0;
        for (int i = 0; i < all.size(); i++) {
            Instruction in = all.get(i);
            if (in.keyword().equals("FROM")) {
                lastFrom = i;
                String[] words = in.args().split("\\s+");
                if (words.length == 3 && words[1].equalsIgnoreCase("AS")) {
                    stages.add(words[2]);
                }
            }
            if (in.keyword().equals("COPY")) {
                String[] words = in.args().split("\\s+");
                if (words[0].startsWith("--from=")) {
                    assertThat(stages).as(in.toString()).contains(words[0].substring("--from=".length()));
                } else if (!words[0].contains("/target/")) {
                    assertThat(ROOT.resolve(words[0])).as(in.toString()).isRegularFile();
                }
            }
        }
        assertThat(stages).as("a runtime built with jlink in its own stage").isNotEmpty();
        assertThat(all.subList(0, lastFrom)).anySatisfy(in -> assertThat(in.args()).contains("jlink"));
        List<Instruction> image = all.subList(lastFrom, all.size());
        String user = last(image, "USER").args().split(":")[0];
        assertThat(user).isNotIn("0", "root");
        assertThat(Integer.parseInt(user)).isPositive();

        ObjectMapper json = new ObjectMapper();
        List<String> entrypoint = List.of(json.readValue(last(image, "ENTRYPOINT").args(), String[].class));
        List<String> cmd = List.of(json.readValue(last(image, "CMD").args(), String[].class));
        String jar = entrypoint.get(entrypoint.indexOf("-jar") + 1);
        assertThat(copiedTo(image, "router-app/target/continuum-router.jar")).isEqualTo(jar);
        assertThat(cmd).containsExactly("serve", "--config", copiedTo(image, "deploy/container/config.yaml"));
        assertThat(entrypoint.get(0)).isEqualTo("java");
        assertThat(last(image, "ENV").args()).contains("PATH=/opt/java/bin:");
        assertThat(last(image, "STOPSIGNAL").args()).isEqualTo("SIGTERM");

        LoadResult config = DeployFiles.validate(CONFIG, Map.of("CONTINUUM_ADMIN_TOKEN", "8d41f0c2a7e93b56"));
        assertThat(config.problems()).as(config.report().toString()).isEmpty();
        BindAddress.Tcp bind = (BindAddress.Tcp) config.orThrow().server().bindAddresses().get(0);
        assertThat(bind.host()).isEqualTo("0.0.0.0");
        assertThat(last(image, "EXPOSE").args()).isEqualTo(String.valueOf(bind.port()));
    }

    @Test
    void theDefaultConfigRefusesToStartWithoutARealAdminToken() {
        LoadResult unset = DeployFiles.validate(CONFIG, Map.of());
        LoadResult placeholder = DeployFiles.validate(CONFIG, Map.of("CONTINUUM_ADMIN_TOKEN", "change-me"));

        assertThat(unset.ok()).isFalse();
        assertThat(unset.report()).anySatisfy(l -> assertThat(l).startsWith("error: admin.auth.token: "));
        assertThat(placeholder.ok()).isFalse();
        assertThat(placeholder.report()).anySatisfy(l -> assertThat(l)
                .startsWith("error: admin.auth.token: a placeholder value"));
    }

    private static Instruction last(List<Instruction> instructions, String keyword) {
        return instructions.stream().filter(i -> i.keyword().equals(keyword)).reduce((a, b) -> b)
                .orElseThrow(() -> new AssertionError("no " + keyword));
    }

    private static String copiedTo(List<Instruction> image, String source) {
        return Objects.requireNonNull(image.stream().filter(i -> i.keyword().equals("COPY"))
                .map(i -> i.args().split("\\s+")).filter(w -> w[0].equals(source)).map(w -> w[1])
                .findFirst().orElse(null), "no COPY of " + source);
    }
}
