package io.switchboard.server;

import io.switchboard.protocol.ClientSettings;
import java.util.Objects;

/**
 * What a component found on the class path gets from the process that serves it: the registry it
 * is bound in (components that call other components look them up there, with {@link
 * #clientSettings()}: the host's TLS key and trust), the registry's shared
 * secret (for those that bind callbacks), and a way to stop the serving process (a matrix
 * worker's {@code shutdown} operation uses it). {@link ComponentProvider#create} receives it; an
 * implementation class takes it in a public constructor, or has a no-argument one if it needs
 * none of this.
 *
 * <pre>{@code
 * public final class StatsService implements Stats {
 *     private final String registryUrl;
 *
 *     public StatsService(ComponentContext context) {
 *         this.registryUrl = context.registryUrl();   // null when served without a registry
 *     }
 *     ...
 * }
 * }</pre>
 */
public final class ComponentContext {
    private final String registryUrl;
    private final String registrySecret;
    private final Runnable stopServing;
    private final ClientSettings clientSettings;

    private ComponentContext(String registryUrl, String registrySecret, Runnable stopServing,
                             ClientSettings clientSettings) {
        this.registryUrl = registryUrl;
        this.registrySecret = registrySecret;
        this.stopServing = stopServing;
        this.clientSettings = Objects.requireNonNull(clientSettings, "clientSettings");
    }

    /**
     * @param registryUrl    the registry's SOAP endpoint, or null when the component is served without one
     * @param registrySecret the registry's shared secret, or null
     * @param stopServing    stops the serving process (unbinding first), or null when the host cannot be
     *                       stopped by its components
     */
    public static ComponentContext of(String registryUrl, String registrySecret, Runnable stopServing) {
        return of(registryUrl, registrySecret, stopServing, ClientSettings.defaults());
    }

    /**
     * A context whose component reaches the registry and other components with {@code
     * clientSettings}: the host's TLS key and trust, so that it gets through where the host does.
     */
    public static ComponentContext of(String registryUrl, String registrySecret, Runnable stopServing,
                                      ClientSettings clientSettings) {
        return new ComponentContext(registryUrl, registrySecret, stopServing, clientSettings);
    }

    /** A context with no registry that cannot stop its host: for tests and in-process use. */
    public static ComponentContext standalone() {
        return new ComponentContext(null, null, null, ClientSettings.defaults());
    }

    /**
     * This context for the component served as {@code component}: its {@link #clientSettings()}
     * name it as the caller of its calls in this process, so that a component it calls over the
     * local protocol (and that component's authorization policy) sees it by name. A host gives
     * each component it serves its own named context.
     *
     * <pre>{@code
     * Skeleton stats = provider.create(ComponentContext.of(registryUrl, secret, stop, hostSettings).named("Stats"));
     * }</pre>
     */
    public ComponentContext named(String component) {
        return new ComponentContext(registryUrl, registrySecret, stopServing, clientSettings.withCallerName(component));
    }

    /** The registry's SOAP endpoint the component is bound in, or null. */
    public String registryUrl() {
        return registryUrl;
    }

    /** The registry's shared secret, or null. */
    public String registrySecret() {
        return registrySecret;
    }

    /**
     * How to reach the registry and other components (give it to {@code Switchboard.Builder.settings}):
     * the host's TLS among them, and the component's name as its caller in this process
     * ({@link #named}); the defaults when the host set none.
     */
    public ClientSettings clientSettings() {
        return clientSettings;
    }

    /** Whether {@link #stopServing()} does anything. */
    public boolean canStopServing() {
        return stopServing != null;
    }

    /**
     * Stops the serving process: what runs is the host's, typically its shutdown hook unbinding the
     * component, so call it after answering, not while a call is under way.
     *
     * @throws UnsupportedOperationException the host gave no way to stop it ({@link #canStopServing()} is false)
     */
    public void stopServing() {
        if (stopServing == null) {
            throw new UnsupportedOperationException("this component's host cannot be stopped by the component");
        }
        stopServing.run();
    }

    @Override
    public String toString() {
        return "ComponentContext[registry " + (registryUrl == null ? "none" : registryUrl)
                + (registrySecret == null ? "" : ", with secret") + (stopServing == null ? "" : ", can stop") + "]";
    }
}
