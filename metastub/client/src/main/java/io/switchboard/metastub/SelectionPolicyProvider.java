package io.switchboard.metastub;

/**
 * A kind of selection policy, found through {@link java.util.ServiceLoader} and named as
 * configuration and the command line write it: {@code NAME} or {@code NAME:ARGUMENT}. Register it in
 * {@code META-INF/services/io.switchboard.metastub.SelectionPolicyProvider}; {@link Policies#byName}
 * and every {@code --policy} option then accept it.
 *
 * <pre>{@code
 * public final class CheapestProvider implements SelectionPolicyProvider {
 *     public String name() { return "cheapest"; }
 *     public String usage() { return "cheapest"; }
 *     public SelectionPolicy create(String argument) { return new CheapestPolicy(); }
 * }
 * }</pre>
 */
public interface SelectionPolicyProvider {
    /** The part of a policy spec before its first colon. */
    String name();

    /** The spec's form, for messages ({@code size[:BYTES]}). */
    String usage();

    /**
     * A new policy (an adaptive one learns per instance, so each stub gets its own).
     *
     * @param argument the spec after {@code name:}, or null for a spec that is the name alone
     * @throws IllegalArgumentException the argument is not one this policy takes
     */
    SelectionPolicy create(String argument);
}
