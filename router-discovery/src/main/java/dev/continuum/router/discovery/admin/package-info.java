/** The discovery part of the admin API, as pure renderers (the admin module mounts the routes). */
@NullMarked
package dev.continuum.router.discovery.admin;

import org.jspecify.annotations.NullMarked;
