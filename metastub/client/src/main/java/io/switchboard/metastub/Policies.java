package io.switchboard.metastub;

/**
 * Selection policies by name, as configuration and the command line write them:
 * {@code adaptive} (the default), {@code size} or {@code size:BYTES}, {@code first-common},
 * {@code fixed:PROTOCOL}. Each call returns a new instance: an adaptive policy learns per instance.
 */
public final class Policies {
    private Policies() {
    }

    public static SelectionPolicy byName(String name) {
        if (AdaptivePolicy.NAME.equals(name)) {
            return new AdaptivePolicy();
        }
        if (FirstCommonPolicy.NAME.equals(name)) {
            return new FirstCommonPolicy();
        }
        if (SizePolicy.NAME.equals(name)) {
            return new SizePolicy();
        }
        if (name.startsWith(SizePolicy.NAME + ":")) {
            try {
                return new SizePolicy(Long.parseLong(name.substring(SizePolicy.NAME.length() + 1)));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("size policy threshold must be a number of bytes: " + name);
            }
        }
        if (name.startsWith("fixed:") && name.length() > "fixed:".length()) {
            return new FixedPolicy(name.substring("fixed:".length()));
        }
        throw new IllegalArgumentException("unknown selection policy '" + name
                + "' (known: adaptive, size[:BYTES], first-common, fixed:PROTOCOL)");
    }
}
