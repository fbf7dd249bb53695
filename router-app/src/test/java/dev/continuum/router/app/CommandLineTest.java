package dev.continuum.router.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.continuum.router.app.CommandLine.Command;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

class CommandLineTest {
    @Test
    void servesByDefault() throws Exception {
        CommandLine cli = CommandLine.parse();
        assertThat(cli.command()).isEqualTo(Command.SERVE);
        assertThat(cli.configFile()).isNull();
    }

    @Test
    void readsServeFlagsInBothSpellings() throws Exception {
        CommandLine cli = CommandLine.parse("serve", "--config=a.yaml", "--bind", "127.0.0.1:1", "--bind=unix:/s",
                "--log-level", "debug");
        assertThat(cli.configFile()).isEqualTo(Path.of("a.yaml"));
        assertThat(cli.bindAddresses()).isEqualTo(List.of("127.0.0.1:1", "unix:/s"));
        assertThat(cli.logLevel()).isEqualTo("debug");
    }

    @Test
    void readsTheDemoCommandWithItsListenerButNoConfigFile() throws Exception {
        CommandLine demo = CommandLine.parse("demo", "--bind", "127.0.0.1:9090");
        assertThat(demo.command()).isEqualTo(Command.DEMO);
        assertThat(demo.bindAddresses()).isEqualTo(List.of("127.0.0.1:9090"));
        assertThatThrownBy(() -> CommandLine.parse("demo", "--config", "a.yaml"))
                .hasMessageContaining("demo: --config is not accepted");
        assertThatThrownBy(() -> CommandLine.parse("demo", "serve")).hasMessageContaining("only one command");
        assertThat(CommandLine.USAGE).contains("continuum-router demo");
    }

    @Test
    void readsTheDemosKvModeAndItsTokenizerDirectoryOnlyForTheDemo() throws Exception {
        assertThat(CommandLine.parse("demo").kv()).isFalse();
        CommandLine kv = CommandLine.parse("demo", "--kv");
        assertThat(kv.kv()).isTrue();
        assertThat(kv.tokenizerDir()).isNull();
        assertThat(CommandLine.parse("demo", "--kv", "--tokenizer-dir=/t").tokenizerDir()).isEqualTo(Path.of("/t"));
        assertThat(CommandLine.parse("demo", "--kv", "--tokenizer-dir", "t").tokenizerDir()).isEqualTo(Path.of("t"));
        assertThatThrownBy(() -> CommandLine.parse("serve", "--kv")).hasMessageContaining("only with demo");
        assertThatThrownBy(() -> CommandLine.parse("demo", "--tokenizer-dir", "t"))
                .hasMessageContaining("only with --kv");
        assertThatThrownBy(() -> CommandLine.parse("demo", "--kv=yes")).hasMessageContaining("takes no value");
    }

    @Test
    void takesTheFileOfConfigSubcommandsPositionallyOrByFlag() throws Exception {
        assertThat(CommandLine.parse("config", "validate", "x.yaml").configFile()).isEqualTo(Path.of("x.yaml"));
        assertThat(CommandLine.parse("config", "validate", "--strict", "x.yaml").strict()).isTrue();
        assertThat(CommandLine.parse("config", "validate", "x.yaml").strict()).isFalse();
        assertThatThrownBy(() -> CommandLine.parse("serve", "--strict")).isInstanceOf(CommandLine.UsageException.class)
                .hasMessageStartingWith("--strict: only with config validate");
        CommandLine show = CommandLine.parse("config", "show", "-c", "y.yaml");
        assertThat(show.command()).isEqualTo(Command.CONFIG_SHOW);
        assertThat(show.configFile()).isEqualTo(Path.of("y.yaml"));
    }

    @Test
    void refusesUnknownArgumentsAndMissingValues() {
        assertThatThrownBy(() -> CommandLine.parse("--nope")).hasMessage("--nope: unknown argument");
        assertThatThrownBy(() -> CommandLine.parse("--config")).hasMessage("--config: missing value");
        assertThatThrownBy(() -> CommandLine.parse("config", "edit"))
                .hasMessage("config edit: unknown subcommand (expected: validate or show)");
        assertThatThrownBy(() -> CommandLine.parse("--version", "--help"))
                .hasMessageContaining("only one command");
        assertThatThrownBy(() -> CommandLine.parse("--version=1")).hasMessage("--version: takes no value");
    }
}
