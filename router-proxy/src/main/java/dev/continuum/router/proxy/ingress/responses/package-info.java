/** The OpenAI Responses ingress ({@code /v1/responses}, and the unpinned {@code /v1/responses/compact}). */
@NullMarked
package dev.continuum.router.proxy.ingress.responses;

import org.jspecify.annotations.NullMarked;
