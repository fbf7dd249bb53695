/** The Anthropic Messages ingress ({@code /v1/messages}, {@code /anthropic/v1/messages}, token counting). */
@NullMarked
package dev.continuum.router.proxy.ingress.anthropic;

import org.jspecify.annotations.NullMarked;
