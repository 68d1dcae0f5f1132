package io.switchboard.server;

/**
 * What a component found on the class path gets from the process that serves it: the registry it
 * is bound in (components that call other components look them up there), the registry's shared
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

    private ComponentContext(String registryUrl, String registrySecret, Runnable stopServing) {
        this.registryUrl = registryUrl;
        this.registrySecret = registrySecret;
        this.stopServing = stopServing;
    }

    /**
     * @param registryUrl    the registry's SOAP endpoint, or null when the component is served without one
     * @param registrySecret the registry's shared secret, or null
     * @param stopServing    stops the serving process (unbinding first), or null when the host cannot be
     *                       stopped by its components
     */
    public static ComponentContext of(String registryUrl, String registrySecret, Runnable stopServing) {
        return new ComponentContext(registryUrl, registrySecret, stopServing);
    }

    /** A context with no registry that cannot stop its host: for tests and in-process use. */
    public static ComponentContext standalone() {
        return new ComponentContext(null, null, null);
    }

    /** The registry's SOAP endpoint the component is bound in, or null. */
    public String registryUrl() {
        return registryUrl;
    }

    /** The registry's shared secret, or null. */
    public String registrySecret() {
        return registrySecret;
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
