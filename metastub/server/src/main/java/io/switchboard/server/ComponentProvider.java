package io.switchboard.server;

import io.switchboard.protocol.Skeleton;

/**
 * A component a server can find on the class path through {@link java.util.ServiceLoader}, by the
 * line {@code META-INF/services/io.switchboard.server.ComponentProvider}. The interface compiler
 * writes both the provider ({@code XxxComponentProvider}) and that line for every schema whose
 * plug-in configuration names an {@code <implementation>}; {@link ComponentProviders} finds them
 * by name, and {@code ./switchboard serve NAME [--classpath JARS]} serves what it finds.
 *
 * <pre>{@code
 * // what the compiler generates for <implementation>org.acme.stats.StatsService</implementation>
 * public final class StatsComponentProvider implements ComponentProvider {
 *     public String name() { return "Stats"; }
 *     public Skeleton create(ComponentContext context) {
 *         return StatsComponent.skeleton(ComponentProviders.instantiate(StatsService.class, context));
 *     }
 * }
 *
 * // a host
 * Skeleton skeleton = ComponentProviders.find("stats").create(ComponentContext.of(registryUrl, secret, stop));
 * server.export(skeleton);
 * }</pre>
 */
public interface ComponentProvider {
    /** The component's name as its schema gives it ({@code Stats}); the name it is bound under by default. */
    String name();

    /** A new instance of the component, ready to export. Called once per serving, not per call. */
    Skeleton create(ComponentContext context);
}
