package dev.continuum.router.kv.prompt;

import com.hubspot.jinjava.el.ExtendedSyntaxBuilder;
import com.hubspot.jinjava.el.ext.AstNamedParameter;
import com.hubspot.jinjava.el.ext.ExtendedParser;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import jinjava.de.odysseus.el.tree.impl.Builder;
import jinjava.de.odysseus.el.tree.impl.Parser;
import jinjava.de.odysseus.el.tree.impl.Scanner;
import jinjava.de.odysseus.el.tree.impl.Scanner.Symbol;
import jinjava.de.odysseus.el.tree.impl.Scanner.Token;
import jinjava.de.odysseus.el.tree.impl.ast.AstBracket;
import jinjava.de.odysseus.el.tree.impl.ast.AstDot;
import jinjava.de.odysseus.el.tree.impl.ast.AstNode;
import jinjava.de.odysseus.el.tree.impl.ast.AstParameters;
import org.jspecify.annotations.Nullable;

/**
 * jinjava's expression syntax with two of Jinja2's rules it gets wrong, as chat templates use them:
 * <ul>
 *   <li>a keyword argument's value is a whole expression: {@code namespace(i=messages|length - 1)} is
 *       {@code i=(messages|length - 1)} (jinjava parses {@code =} as an operator of additive precedence, giving
 *       {@code (i=messages|length) - 1});</li>
 *   <li>subscripts take Python slices with an optional step, {@code messages[::-1]} and {@code s[1:-1]}
 *       ({@link AstSlice}; jinjava knows only {@code [a:b]}).</li>
 * </ul>
 * Everything else is jinjava's {@link ExtendedParser}. Instantiated by the expression factory by class name.
 */
public final class HfSyntaxBuilder extends ExtendedSyntaxBuilder {
    private static final long serialVersionUID = 1L;

    public HfSyntaxBuilder() {
        super();
    }

    public HfSyntaxBuilder(Feature... features) {
        super(features);
    }

    @Override
    protected Parser createParser(String expression) {
        return new HfParser(this, expression);
    }

    private static final class HfParser extends ExtendedParser {
        HfParser(Builder context, String input) {
            super(context, input);
        }

        @Override
        protected AstParameters params(Symbol left, Symbol right)
                throws Scanner.ScanException, Parser.ParseException {
            consumeToken(left);
            List<AstNode> list = Collections.emptyList();
            AstNode v = parameter(false);
            if (v != null) {
                list = new ArrayList<>();
                list.add(v);
                while (getToken().getSymbol() == Symbol.COMMA) {
                    consumeToken();
                    list.add(parameter(true));
                }
            }
            consumeToken(right);
            return createAstParameters(list);
        }

        private @Nullable AstNode parameter(boolean required) throws Scanner.ScanException, Parser.ParseException {
            if (getToken().getSymbol() == Symbol.IDENTIFIER && isAssign(lookahead(0))) {
                String name = consumeToken().getImage();
                consumeToken();
                return new AstNamedParameter(identifier(name), expr(true));
            }
            return expr(required);
        }

        private static boolean isAssign(Token token) {
            return token.getSymbol() == Symbol.EXTENSION && "=".equals(token.getImage());
        }

        @Override
        protected @Nullable AstNode value() throws Scanner.ScanException, Parser.ParseException {
            boolean lvalue = true;
            AstNode v = nonliteral();
            if (v == null) {
                v = literal();
                if (v == null) {
                    return null;
                }
                lvalue = false;
            }
            while (true) {
                Symbol symbol = getToken().getSymbol();
                if (symbol == Symbol.DOT) {
                    consumeToken();
                    String name = consumeToken(Symbol.IDENTIFIER).getImage();
                    AstDot dot = createAstDot(v, name, lvalue);
                    v = getToken().getSymbol() == Symbol.LPAREN && context.isEnabled(Feature.METHOD_INVOCATIONS)
                            ? createAstMethod(dot, params()) : dot;
                } else if (symbol == Symbol.LBRACK) {
                    consumeToken();
                    v = subscript(v, lvalue);
                } else {
                    // natural operator precedence (TemplateEngine turns it on): operators are parsed above
                    return v;
                }
            }
        }

        private AstNode subscript(AstNode base, boolean lvalue) throws Scanner.ScanException, Parser.ParseException {
            AstNode start = getToken().getSymbol() == Symbol.COLON ? null : expr(true);
            if (getToken().getSymbol() == Symbol.RBRACK) {
                consumeToken();
                AstBracket bracket = createAstBracket(base, start, lvalue, !context.isEnabled(Feature.NULL_PROPERTIES));
                return getToken().getSymbol() == Symbol.LPAREN && context.isEnabled(Feature.METHOD_INVOCATIONS)
                        ? createAstMethod(bracket, params()) : bracket;
            }
            consumeToken(Symbol.COLON);
            AstNode stop = sliceBound();
            AstNode step = null;
            if (getToken().getSymbol() == Symbol.COLON) {
                consumeToken();
                step = sliceBound();
            }
            consumeToken(Symbol.RBRACK);
            return new AstSlice(base, start, stop, step);
        }

        private @Nullable AstNode sliceBound() throws Scanner.ScanException, Parser.ParseException {
            Symbol s = getToken().getSymbol();
            return s == Symbol.COLON || s == Symbol.RBRACK ? null : expr(true);
        }
    }
}
