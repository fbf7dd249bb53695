package dev.continuum.router.core.config.internal;

import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.Optional;
import org.jspecify.annotations.Nullable;
import org.snakeyaml.engine.v2.events.Event;
import org.snakeyaml.engine.v2.events.ScalarEvent;
import org.snakeyaml.engine.v2.exceptions.Mark;
import org.snakeyaml.engine.v2.exceptions.YamlEngineException;
import org.snakeyaml.engine.v2.parser.Parser;

/**
 * A YAML event parser that refuses a document nesting more than {@code maxDepth} maps and lists inside one
 * another, before the composer (which recurses once per level) sees the level that is too deep. SnakeYAML's
 * parser itself keeps its state in a heap stack, so a document of any depth is read this far without deep
 * recursion; the refusal names the path of the collection that is too deep and where it starts.
 */
final class DepthBoundParser implements Parser {
    /**
     * The document nests deeper than the bound; {@code path} is the YAML path of the collection refused. A
     * {@link YamlEngineException}, so a caller that only asks whether a text parses treats it as a syntax error.
     */
    static final class TooDeep extends YamlEngineException {
        private static final long serialVersionUID = 1L;
        final String path;
        final transient Optional<Mark> mark;

        TooDeep(String path, Optional<Mark> mark) {
            super("nested too deep at " + path);
            this.path = path;
            this.mark = mark;
        }
    }

    /** One open map or list: where the next node goes in it. */
    private static final class Level {
        final boolean mapping;
        /** In a map: whether the next node is a key. */
        boolean atKey = true;
        /** In a map: the key whose value is being read; in a list: the index of the element being read. */
        String key = "?";
        int index;

        Level(boolean mapping) {
            this.mapping = mapping;
        }
    }

    private final Parser parser;
    private final int maxDepth;
    private final String rootPath;
    private final ArrayDeque<Level> open = new ArrayDeque<>();

    DepthBoundParser(Parser parser, int maxDepth, String rootPath) {
        this.parser = parser;
        this.maxDepth = maxDepth;
        this.rootPath = rootPath;
    }

    @Override
    public boolean checkEvent(Event.ID choice) {
        return parser.checkEvent(choice);
    }

    @Override
    public Event peekEvent() {
        return parser.peekEvent();
    }

    @Override
    public boolean hasNext() {
        return parser.hasNext();
    }

    @Override
    public Event next() {
        Event e = parser.next();
        switch (e.getEventId()) {
            case MappingStart, SequenceStart -> {
                if (open.size() >= maxDepth) {
                    throw new TooDeep(path(), e.getStartMark());
                }
                @Nullable Level parent = open.peek();
                if (parent != null && parent.mapping && parent.atKey) {
                    parent.key = "?"; // a collection as a key: the loader refuses it later
                }
                open.push(new Level(e.getEventId() == Event.ID.MappingStart));
            }
            case MappingEnd, SequenceEnd -> {
                open.pop();
                nodeRead(null);
            }
            case Scalar -> nodeRead(((ScalarEvent) e).getValue());
            case Alias -> nodeRead(null);
            default -> {
                // stream and document boundaries, comments: no node
            }
        }
        return e;
    }

    /** A whole node was read in the innermost open collection; {@code scalar} its text when it is a scalar. */
    private void nodeRead(@Nullable String scalar) {
        Level level = open.peek();
        if (level == null) {
            return;
        }
        if (!level.mapping) {
            level.index++;
        } else if (level.atKey) {
            level.key = scalar == null ? "?" : scalar;
            level.atKey = false;
        } else {
            level.atKey = true;
        }
    }

    /** The path of the node about to be read, as the loader writes paths ({@code a.b[3].c}). */
    private String path() {
        StringBuilder sb = new StringBuilder(rootPath);
        for (Iterator<Level> it = open.descendingIterator(); it.hasNext(); ) {
            Level level = it.next();
            if (level.mapping) {
                if (sb.length() > 0) {
                    sb.append('.');
                }
                sb.append(level.atKey ? "?" : level.key);
            } else {
                sb.append('[').append(level.index).append(']');
            }
            if (sb.length() > 512) {
                sb.setLength(512);
                sb.append("...");
                break;
            }
        }
        return sb.toString();
    }
}
