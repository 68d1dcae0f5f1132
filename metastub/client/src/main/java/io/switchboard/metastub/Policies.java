package io.switchboard.metastub;

import io.switchboard.protocol.spi.NamedProviders;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * Selection policies by name, as configuration and the command line write them, through the
 * {@link SelectionPolicyProvider}s on the class path: {@code adaptive} (the default), {@code size}
 * or {@code size:BYTES}, {@code first-common}, {@code fixed:PROTOCOL}, and any a jar adds. Each
 * call returns a new instance: an adaptive policy learns per instance.
 *
 * <pre>{@code
 * SelectionPolicy p = Policies.byName("size:4096");
 * }</pre>
 */
public final class Policies {
    private Policies() {
    }

    /** @throws IllegalArgumentException no policy has that name, or it does not take that argument */
    public static SelectionPolicy byName(String spec) {
        SelectionPolicyProvider p = providers().find(NamedProviders.name(spec));
        if (p == null) {
            throw new IllegalArgumentException("unknown selection policy '" + spec + "' (known: " + usages() + ")");
        }
        return p.create(NamedProviders.argument(spec));
    }

    /** The forms the policies on the class path take, for help texts. */
    public static String usages() {
        return providers().all().values().stream().map(SelectionPolicyProvider::usage)
                .collect(Collectors.joining(", "));
    }

    /** Every policy kind on the class path, by name. */
    public static Map<String, SelectionPolicyProvider> all() {
        return providers().all();
    }

    private static NamedProviders<SelectionPolicyProvider> providers() {
        return NamedProviders.of(SelectionPolicyProvider.class, "selection policy", SelectionPolicyProvider::name);
    }
}
