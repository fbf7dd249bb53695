/**
 * Address literals and CIDR blocks: the parsing every module that checks an address against an allow list
 * shares (config validation, the proxy's trusted proxies, the event plane's dial policy).
 */
@NullMarked
package dev.continuum.router.core.net;

import org.jspecify.annotations.NullMarked;
