package io.switchboard.metastub;

/**
 * Selection policies by name, as configuration and the command line write them:
 * {@code first-common}, {@code fixed:PROTOCOL}.
 */
public final class Policies {
    private Policies() {
    }

    public static SelectionPolicy byName(String name) {
        if (FirstCommonPolicy.NAME.equals(name)) {
            return new FirstCommonPolicy();
        }
        if (name.startsWith("fixed:") && name.length() > "fixed:".length()) {
            return new FixedPolicy(name.substring("fixed:".length()));
        }
        throw new IllegalArgumentException("unknown selection policy '" + name + "' (known: first-common, fixed:PROTOCOL)");
    }
}
