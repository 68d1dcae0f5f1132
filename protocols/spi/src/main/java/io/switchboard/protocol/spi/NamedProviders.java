package io.switchboard.protocol.spi;

import java.util.Collections;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * The providers of one extension point, found once through {@link ServiceLoader} and named by a
 * short key, in the manner of Dubbo's extensions: protocols ({@code soap}), selection policies
 * ({@code adaptive}, {@code size:N}), registry stores ({@code file:PATH}, {@code zookeeper://...}).
 * A new one is a class and a line in {@code META-INF/services/<extension point>}; nothing else is
 * edited.
 *
 * <p>A spec is {@code NAME} or {@code NAME:ARGUMENT}; {@link #name(String)} and {@link
 * #argument(String)} split it. Providers are looked up with the thread's context class loader of
 * the first use (so a command that puts extra jars on a class loader first finds them), falling
 * back to the extension point's own.
 *
 * <pre>{@code
 * NamedProviders<SelectionPolicyProvider> policies =
 *         NamedProviders.of(SelectionPolicyProvider.class, "selection policy", SelectionPolicyProvider::name);
 * SelectionPolicy p = policies.get(NamedProviders.name("size:4096")).create("4096");
 * }</pre>
 */
public final class NamedProviders<P> {
    private static final Map<Key, NamedProviders<?>> LOADED = new ConcurrentHashMap<>();

    private final String what;
    private final Map<String, P> byName;

    private NamedProviders(String what, Map<String, P> byName) {
        this.what = what;
        this.byName = Collections.unmodifiableMap(byName);
    }

    /**
     * The providers of {@code type} on the class path, loaded on first use and kept; {@code what}
     * names one in messages ("protocol", "selection policy").
     *
     * @throws IllegalStateException two providers share a name, or one cannot be loaded
     */
    @SuppressWarnings("unchecked")
    public static <P> NamedProviders<P> of(Class<P> type, String what, Function<P, String> nameOf) {
        ClassLoader loader = Thread.currentThread().getContextClassLoader();
        if (loader == null) {
            loader = type.getClassLoader();
        }
        ClassLoader from = loader;
        return (NamedProviders<P>) LOADED.computeIfAbsent(new Key(type, from), k -> load(type, what, nameOf, from));
    }

    private static <P> NamedProviders<P> load(Class<P> type, String what, Function<P, String> nameOf,
                                              ClassLoader loader) {
        Map<String, P> found = new TreeMap<>();
        try {
            for (P p : ServiceLoader.load(type, loader)) {
                P previous = found.putIfAbsent(nameOf.apply(p), p);
                if (previous != null && previous.getClass() != p.getClass()) {
                    throw new IllegalStateException("two " + what + "s are named '" + nameOf.apply(p)
                            + "': " + previous.getClass().getName() + " and " + p.getClass().getName());
                }
            }
        } catch (ServiceConfigurationError e) {
            throw new IllegalStateException("a " + what + " on the class path cannot be loaded: "
                    + e.getMessage(), e);
        }
        return new NamedProviders<>(what, found);
    }

    /** The provider named {@code name}. */
    public P get(String name) {
        P p = byName.get(name);
        if (p == null) {
            throw new NoSuchElementException("no " + what + " named '" + name
                    + "' on the class path (found: " + byName.keySet() + ")");
        }
        return p;
    }

    /** The provider named {@code name}, or null. */
    public P find(String name) {
        return byName.get(name);
    }

    /** Every provider, by name, in name order. */
    public Map<String, P> all() {
        return byName;
    }

    /** The name part of a spec: {@code size} of {@code size:4096}, {@code zookeeper} of {@code zookeeper://h:1/r}. */
    public static String name(String spec) {
        int colon = spec.indexOf(':');
        return colon < 0 ? spec : spec.substring(0, colon);
    }

    /** The argument part of a spec (after the first colon), or null when it has none. */
    public static String argument(String spec) {
        int colon = spec.indexOf(':');
        return colon < 0 ? null : spec.substring(colon + 1);
    }

    private record Key(Class<?> type, ClassLoader loader) {
    }
}
