package io.switchboard.server;

import io.switchboard.protocol.spi.NamedProviders;
import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.NoSuchElementException;

/**
 * The components on the class path ({@link ComponentProvider}s found through {@link
 * java.util.ServiceLoader} with the thread's context class loader of the first use, as {@link
 * NamedProviders} does), found by name, and the one piece of reflection generated providers use.
 *
 * <p>Names match without regard to case, hyphens or underscores, so {@code stats}, {@code Stats}
 * and {@code matrix-worker} (for {@code MatrixWorker}) all work on the command line.
 *
 * <pre>{@code
 * ComponentProvider stats = ComponentProviders.find("stats");          // or NoSuchElementException listing all
 * Skeleton skeleton = stats.create(ComponentContext.standalone());
 * }</pre>
 */
public final class ComponentProviders {
    private ComponentProviders() {
    }

    /** Every component on the class path, by its own name, in name order. */
    public static Map<String, ComponentProvider> all() {
        return NamedProviders.of(ComponentProvider.class, "component", ComponentProvider::name).all();
    }

    /**
     * The component whose name matches {@code name} (case, hyphens and underscores aside).
     *
     * @throws NoSuchElementException none matches; the message lists those found
     * @throws IllegalArgumentException two components match (their names differ only in case or hyphens)
     */
    public static ComponentProvider find(String name) {
        String wanted = key(name);
        List<ComponentProvider> matches = new ArrayList<>();
        for (ComponentProvider p : all().values()) {
            if (key(p.name()).equals(wanted)) {
                matches.add(p);
            }
        }
        if (matches.isEmpty()) {
            throw new NoSuchElementException("no component named '" + name + "' on the class path (found: "
                    + (all().isEmpty() ? "none" : String.join(", ", all().keySet())) + ")");
        }
        if (matches.size() > 1) {
            throw new IllegalArgumentException("'" + name + "' matches several components: "
                    + matches.stream().map(p -> p.name() + " (" + p.getClass().getName() + ")").toList());
        }
        return matches.get(0);
    }

    /** What names are compared by: lower case, without hyphens and underscores. */
    static String key(String name) {
        return name.toLowerCase(Locale.ROOT).replace("-", "").replace("_", "");
    }

    /**
     * A new instance of a component's implementation class, by its public constructor that takes a
     * {@link ComponentContext}, or else its public no-argument one. Generated providers call this
     * once per {@link ComponentProvider#create}; calls to the component never go through reflection.
     *
     * @throws IllegalStateException the class has neither constructor, is abstract, or its constructor
     *                               failed (the cause is the constructor's exception)
     */
    public static <T> T instantiate(Class<T> implementation, ComponentContext context) {
        if (Modifier.isAbstract(implementation.getModifiers()) || !Modifier.isPublic(implementation.getModifiers())) {
            throw new IllegalStateException(implementation.getName()
                    + " cannot be a component's implementation: it must be a public, non-abstract class");
        }
        Constructor<T> constructor;
        Object[] arguments;
        try {
            constructor = implementation.getConstructor(ComponentContext.class);
            arguments = new Object[] {context};
        } catch (NoSuchMethodException withoutContext) {
            try {
                constructor = implementation.getConstructor();
                arguments = new Object[0];
            } catch (NoSuchMethodException none) {
                String simple = implementation.getSimpleName();
                throw new IllegalStateException(implementation.getName() + " needs a public constructor "
                        + simple + "(ComponentContext) or " + simple + "() to be served as a component");
            }
        }
        try {
            return constructor.newInstance(arguments);
        } catch (InvocationTargetException e) {
            Throwable cause = e.getCause();
            throw new IllegalStateException("the constructor of " + implementation.getName() + " failed: " + cause,
                    cause);
        } catch (InstantiationException | IllegalAccessException e) {
            throw new IllegalStateException("cannot construct " + implementation.getName() + ": " + e, e);
        }
    }
}
