package dev.continuum.router.app;

import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.syntax.ArchRuleDefinition;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The house rules of docs/architecture.md, checked on every build: the module arrows on the compiled main classes
 * (ArchUnit reads the bytecode, so a fully qualified name cannot sneak past an import check), and on the main
 * sources: no {@code internal} package used from outside its module, every main package null-marked, no main class
 * over 600 lines.
 */
class ArchitectureTest {
    private static final String ROOT = "dev.continuum.router";
    private static final int MAX_MAIN_CLASS_LINES = 600;
    private static JavaClasses main;

    @BeforeAll
    static void importMainClasses() {
        main = new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages(ROOT);
        // Every module must be there, whether the reactor hands it over as a jar or as its classes folder.
        assertThat(main.stream().map(c -> c.getPackageName().split("\\.")[3]).distinct())
                .contains("core", "proxy", "eventplane", "discovery", "load", "shim", "kv", "eventbus", "agents",
                        "admin", "app", "sim");
    }

    @Test
    void modulesDependOnlyDownwardsAlongTheDocumentedArrows() {
        layeredArchitecture().consideringOnlyDependenciesInLayers()
                .layer("core").definedBy(ROOT + ".core..")
                .layer("proxy").definedBy(ROOT + ".proxy..")
                .layer("discovery").definedBy(ROOT + ".discovery..")
                .layer("eventplane").definedBy(ROOT + ".eventplane..")
                .layer("load").definedBy(ROOT + ".load..")
                .layer("shim").definedBy(ROOT + ".shim..")
                .layer("kv").definedBy(ROOT + ".kv..")
                .layer("replicas").definedBy(ROOT + ".replicas..")
                .layer("eventbus").definedBy(ROOT + ".eventbus..")
                .layer("agents").definedBy(ROOT + ".agents..")
                .layer("admin").definedBy(ROOT + ".admin..")
                .layer("app").definedBy(ROOT + ".app..")
                .layer("sim").definedBy(ROOT + ".sim..")
                .whereLayer("core").mayNotAccessAnyLayer()
                .whereLayer("proxy").mayOnlyAccessLayers("core")
                .whereLayer("discovery").mayOnlyAccessLayers("core")
                .whereLayer("eventplane").mayOnlyAccessLayers("core", "discovery")
                .whereLayer("load").mayOnlyAccessLayers("core", "discovery", "eventplane")
                .whereLayer("shim").mayOnlyAccessLayers("core", "proxy", "discovery", "load")
                .whereLayer("kv").mayOnlyAccessLayers("core", "proxy", "discovery", "eventplane", "load", "shim",
                        "eventbus")
                .whereLayer("replicas").mayOnlyAccessLayers("core", "discovery", "eventplane", "load", "shim")
                .whereLayer("eventbus").mayOnlyAccessLayers("core", "eventplane")
                .whereLayer("agents").mayOnlyAccessLayers("core", "discovery", "eventplane", "eventbus")
                .whereLayer("admin").mayOnlyAccessLayers("core", "proxy", "discovery", "eventplane", "load", "shim",
                        "kv", "eventbus")
                .whereLayer("sim").mayNotAccessAnyLayer()
                .check(main);
    }

    @Test
    void theFoundationKnowsNoNetworkingLibrary() {
        ArchRuleDefinition.noClasses().that().resideInAPackage(ROOT + ".core..")
                .should().dependOnClassesThat().resideInAPackage("io.netty..")
                .because("the foundation is config, lifecycle and logging; the HTTP server is router-proxy's")
                .check(main);
    }

    @Test
    void noInternalPackageIsUsedFromOutsideItsModule() {
        Pattern internalImport = Pattern.compile("^import (?:static )?" + Pattern.quote(ROOT)
                + "\\.(\\w+)\\.[\\w.]*\\binternal\\.", Pattern.MULTILINE);
        List<String> offenders = new ArrayList<>();
        for (Path file : mainSources()) {
            String owner = moduleRootPackage(file);
            Matcher m = internalImport.matcher(read(file));
            while (m.find()) {
                if (!m.group(1).equals(owner)) {
                    offenders.add(relative(file) + " imports " + m.group());
                }
            }
        }
        assertThat(offenders).isEmpty();
    }

    @Test
    void everyMainPackageHasANullMarkedPackageInfo() {
        Map<Path, Boolean> packages = new TreeMap<>();
        for (Path file : mainSources()) {
            packages.putIfAbsent(file.getParent(), false);
            if (file.getFileName().toString().equals("package-info.java") && read(file).contains("@NullMarked")) {
                packages.put(file.getParent(), true);
            }
        }
        assertThat(packages).isNotEmpty();
        assertThat(packages.entrySet().stream().filter(e -> !e.getValue()).map(e -> relative(e.getKey())))
                .as("main packages without a package-info.java carrying @NullMarked").isEmpty();
    }

    @Test
    void noMainClassIsLongerThanSixHundredLines() {
        List<String> tooLong = new ArrayList<>();
        for (Path file : mainSources()) {
            long lines = read(file).lines().count();
            if (lines > MAX_MAIN_CLASS_LINES) {
                tooLong.add(relative(file) + ": " + lines + " lines");
            }
        }
        assertThat(tooLong).isEmpty();
    }

    private static Path projectRoot() {
        Path here = Path.of("").toAbsolutePath();
        Path root = Files.exists(here.resolve("router-core")) ? here : here.getParent();
        assertThat(root.resolve("pom.xml")).exists();
        return root;
    }

    private static List<Path> mainSources() {
        Path root = projectRoot();
        List<Path> files = new ArrayList<>();
        try (Stream<Path> modules = Files.list(root)) {
            for (Path module : modules.filter(p -> p.getFileName().toString().startsWith("router-")).toList()) {
                Path src = module.resolve("src/main/java");
                if (Files.isDirectory(src)) {
                    try (Stream<Path> walk = Files.walk(src)) {
                        walk.filter(p -> p.toString().endsWith(".java")).forEach(files::add);
                    }
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        assertThat(files).hasSizeGreaterThan(300);
        return files;
    }

    /** The third package segment of a main source, read from its path: {@code core} for router-core's files. */
    private static String moduleRootPackage(Path file) {
        Path rel = projectRoot().relativize(file);
        // router-x/src/main/java/dev/continuum/router/<pkg>/...
        return rel.getName(7).toString();
    }

    private static String relative(Path p) {
        return projectRoot().relativize(p).toString();
    }

    private static String read(Path file) {
        try {
            return Files.readString(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
