package io.switchboard.roundtrip;

import net.jqwik.api.lifecycle.AroundPropertyHook;
import net.jqwik.api.lifecycle.PropagationMode;
import net.jqwik.api.lifecycle.PropertyExecutionResult;
import net.jqwik.api.lifecycle.PropertyExecutor;
import net.jqwik.api.lifecycle.PropertyLifecycleContext;

/**
 * The seed and the number of tries of the round-trip properties. CI runs a fixed seed, so a run is
 * repeatable and a failure reproduces; a long run picks its own:
 *
 * <pre>
 * mvn -B -ntp -pl metastub/client -am test -Dtest='RoundTripPropertiesTest' -Dsurefire.failIfNoSpecifiedTests=false \
 *     -Dswitchboard.properties.seed=random -Dswitchboard.properties.tries=20000
 * </pre>
 *
 * {@code switchboard.properties.seed} is a number or {@code random} (jqwik then reports the seed it
 * drew, to rerun with); it also chooses the schemas. {@code switchboard.properties.tries} multiplies
 * nothing: it is the tries of each property.
 */
public final class PropertySettings implements AroundPropertyHook {
    static final String SEED = "switchboard.properties.seed";
    static final String TRIES = "switchboard.properties.tries";
    /** The seed CI runs with. */
    static final String FIXED_SEED = "20261124";

    /** The seed of this run, or null for a random one. */
    static String seed() {
        String s = System.getProperty(SEED, FIXED_SEED).strip();
        return s.equalsIgnoreCase("random") ? null : s;
    }

    /** Registered on the property class: it has to reach the properties in it. */
    @Override
    public PropagationMode propagateTo() {
        return PropagationMode.DIRECT_DESCENDANTS;
    }

    @Override
    public PropertyExecutionResult aroundProperty(PropertyLifecycleContext context, PropertyExecutor property) {
        String seed = seed();
        if (seed != null) {
            context.attributes().setSeed(seed);
        }
        String tries = System.getProperty(TRIES);
        if (tries != null) {
            context.attributes().setTries(Integer.valueOf(tries.strip()));
        }
        return property.execute();
    }
}
