package dev.continuum.router.core.config.internal;

import java.util.List;
import java.util.Optional;
import org.jspecify.annotations.Nullable;
import org.snakeyaml.engine.v2.api.LoadSettings;
import org.snakeyaml.engine.v2.common.ScalarStyle;
import org.snakeyaml.engine.v2.composer.Composer;
import org.snakeyaml.engine.v2.exceptions.Mark;
import org.snakeyaml.engine.v2.exceptions.MarkedYamlEngineException;
import org.snakeyaml.engine.v2.exceptions.YamlEngineException;
import org.snakeyaml.engine.v2.nodes.MappingNode;
import org.snakeyaml.engine.v2.nodes.Node;
import org.snakeyaml.engine.v2.nodes.NodeTuple;
import org.snakeyaml.engine.v2.nodes.ScalarNode;
import org.snakeyaml.engine.v2.nodes.SequenceNode;
import org.snakeyaml.engine.v2.nodes.Tag;
import org.snakeyaml.engine.v2.parser.Parser;
import org.snakeyaml.engine.v2.parser.ParserImpl;
import org.snakeyaml.engine.v2.scanner.StreamReader;
import org.snakeyaml.engine.v2.schema.CoreSchema;

/**
 * Composes YAML text into a {@link TreeNode} tree with {@code file:line:column} marks. Composing (not
 * constructing) keeps each scalar's text, style and mark, so values are typed by the binders and a
 * problem can point at its line. Merge keys ({@code <<}) are applied here; explicit keys win.
 */
public final class YamlTrees {
    /**
     * How many maps and lists a document may nest inside one another (docs/configuration.md). Checked while
     * parsing, before SnakeYAML's composer, which recurses once per level, and again after aliases are expanded.
     */
    public static final int MAX_DEPTH = 128;

    private YamlTrees() {
    }

    /**
     * Parses one YAML document. A syntax error or a document too deep or too large is reported to the
     * context's problems and gives null (nothing of it can be trusted); a duplicate key is reported and
     * its later value dropped. An empty document gives an empty map.
     *
     * @param sourceName shown in locations, for example {@code config.yaml}
     * @param rootPath   path of the document root ("" for the main config)
     */
    public static @Nullable TreeNode parse(String text, String sourceName, String rootPath, TreeContext ctx) {
        LoadSettings settings = LoadSettings.builder()
                .setLabel(sourceName)
                .setSchema(new CoreSchema())
                .setUseMarks(true)
                .setAllowRecursiveKeys(false)
                .build();
        Optional<Node> document;
        try {
            document = compose(text, settings, rootPath);
        } catch (DepthBoundParser.TooDeep e) {
            ctx.problems().error(e.path, "nested deeper than " + MAX_DEPTH + " levels" + at(sourceName, e.mark)
                    + " (expected: at most " + MAX_DEPTH + " maps and lists inside one another)");
            return null;
        } catch (MarkedYamlEngineException e) {
            String where = e.getProblemMark().map(m -> " at line " + (m.getLine() + 1) + ", column "
                    + (m.getColumn() + 1)).orElse("");
            ctx.problems().error(rootPath, "invalid YAML" + where + ": " + e.getProblem());
            return null;
        } catch (YamlEngineException e) {
            ctx.problems().error(rootPath, "invalid YAML: " + e.getMessage());
            return null;
        }
        if (document.isEmpty()) {
            return TreeNode.emptyRoot(ctx, sourceName);
        }
        Builder builder = new Builder(ctx, sourceName);
        TreeNode root = builder.convert(document.get(), rootPath, 0);
        if (builder.tooLarge) {
            ctx.problems().error(builder.tooLargeAt, "the document is too large or too deep after expanding aliases"
                    + " at " + builder.tooLargeLocation + " (expected: at most " + TreeContext.MAX_NODES
                    + " values, nested at most " + MAX_DEPTH + " levels)");
            return null;
        }
        return root;
    }

    /**
     * Composes one document, refusing one nested deeper than {@link #MAX_DEPTH} before the composer recurses into
     * it: every caller that composes config YAML goes through here.
     *
     * @throws YamlEngineException a syntax error, or a document too deep
     */
    public static Optional<Node> compose(String text, LoadSettings settings, String rootPath) {
        Parser parser = new DepthBoundParser(new ParserImpl(settings, new StreamReader(settings, text)), MAX_DEPTH,
                rootPath);
        return new Composer(settings, parser).getSingleNode();
    }

    private static String at(String sourceName, Optional<Mark> mark) {
        return mark.map(m -> " at " + sourceName + ":" + (m.getLine() + 1) + ":" + (m.getColumn() + 1)).orElse("");
    }

    private static final class Builder {
        private final TreeContext ctx;
        private final String sourceName;
        private boolean tooLarge;
        /** Where the bound was first crossed. */
        private String tooLargeAt = "";
        private String tooLargeLocation = "";

        Builder(TreeContext ctx, String sourceName) {
            this.ctx = ctx;
            this.sourceName = sourceName;
        }

        String location(Node node) {
            Optional<Mark> mark = node.getStartMark();
            return mark.map(m -> sourceName + ":" + (m.getLine() + 1) + ":" + (m.getColumn() + 1)).orElse(sourceName);
        }

        TreeNode convert(Node node, String path, int depth) {
            String location = location(node);
            if (tooLarge || !ctx.countNode() || (depth >= MAX_DEPTH && !(node instanceof ScalarNode))) {
                if (!tooLarge) {
                    tooLarge = true;
                    tooLargeAt = path;
                    tooLargeLocation = location;
                }
                return TreeNode.nullNode(ctx, path, location);
            }
            if (node instanceof ScalarNode scalar) {
                boolean plain = scalar.getScalarStyle() == ScalarStyle.PLAIN;
                Tag tag = scalar.getTag();
                if (plain && Tag.NULL.equals(tag)) {
                    return TreeNode.nullNode(ctx, path, location);
                }
                boolean typed = plain && (Tag.INT.equals(tag) || Tag.FLOAT.equals(tag) || Tag.BOOL.equals(tag));
                return TreeNode.scalar(ctx, path, location, scalar.getValue(), typed, true);
            }
            if (node instanceof SequenceNode seq) {
                TreeNode list = TreeNode.list(ctx, path, location);
                List<Node> items = seq.getValue();
                for (int i = 0; i < items.size(); i++) {
                    list.addElement(convert(items.get(i), path + "[" + i + "]", depth + 1));
                }
                return list;
            }
            MappingNode mapping = (MappingNode) node;
            TreeNode map = TreeNode.map(ctx, path, location);
            List<NodeTuple> merges = new java.util.ArrayList<>();
            for (NodeTuple tuple : mapping.getValue()) {
                Node keyNode = tuple.getKeyNode();
                if (!(keyNode instanceof ScalarNode keyScalar)) {
                    ctx.problems().error(path, "a map key that is not a scalar at " + location(keyNode)
                            + " (expected: plain keys)");
                    continue;
                }
                if (Tag.MERGE.equals(keyNode.getTag()) || (keyScalar.getScalarStyle() == ScalarStyle.PLAIN
                        && keyScalar.getValue().equals("<<"))) {
                    merges.add(tuple);
                    continue;
                }
                String key = keyScalar.getValue();
                String childPath = TreeNode.childPath(path, key);
                if (map.hasChild(key)) {
                    ctx.problems().error(childPath, "duplicate key (expected: each key once per map)");
                    continue;
                }
                map.putChild(key, convert(tuple.getValueNode(), childPath, depth + 1));
            }
            for (NodeTuple merge : merges) {
                Node value = merge.getValueNode();
                List<Node> sources = value instanceof SequenceNode seq ? seq.getValue() : List.of(value);
                for (Node source : sources) {
                    if (!(source instanceof MappingNode)) {
                        ctx.problems().error(path, "a merge key (<<) whose value is not a map at "
                                + location(source) + " (expected: a map or a list of maps)");
                        continue;
                    }
                    TreeNode merged = convert(source, path, depth + 1);
                    for (String key : merged.keys()) {
                        if (!map.hasChild(key)) {
                            map.putChild(key, (TreeNode) merged.get(key));
                        }
                    }
                }
            }
            return map;
        }
    }
}
