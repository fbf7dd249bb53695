package dev.continuum.router.admin;

/** The live config as a masked tree (maps, lists, scalars), ready for JSON; secrets are already masked. */
@FunctionalInterface
public interface ConfigReadback {
    Object maskedTree();
}
