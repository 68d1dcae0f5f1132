package io.switchboard.metastub;

/** The policies every client has, each registered by name in {@code META-INF/services}. */
final class BuiltInPolicies {
    private BuiltInPolicies() {
    }

    private static void noArgument(String name, String argument) {
        if (argument != null) {
            throw new IllegalArgumentException("the " + name + " policy takes no argument: " + name + ":" + argument);
        }
    }

    /** {@code adaptive}: learns each protocol's cost per call shape (the default). */
    public static final class Adaptive implements SelectionPolicyProvider {
        @Override
        public String name() {
            return AdaptivePolicy.NAME;
        }

        @Override
        public String usage() {
            return AdaptivePolicy.NAME;
        }

        @Override
        public SelectionPolicy create(String argument) {
            noArgument(name(), argument);
            return new AdaptivePolicy();
        }
    }

    /** {@code first-common}: the first protocol both sides speak, in the client's order. */
    public static final class FirstCommon implements SelectionPolicyProvider {
        @Override
        public String name() {
            return FirstCommonPolicy.NAME;
        }

        @Override
        public String usage() {
            return FirstCommonPolicy.NAME;
        }

        @Override
        public SelectionPolicy create(String argument) {
            noArgument(name(), argument);
            return new FirstCommonPolicy();
        }
    }

    /** {@code size[:BYTES]}: SOAP below the threshold, the first other common protocol above it. */
    public static final class Size implements SelectionPolicyProvider {
        @Override
        public String name() {
            return SizePolicy.NAME;
        }

        @Override
        public String usage() {
            return SizePolicy.NAME + "[:BYTES]";
        }

        @Override
        public SelectionPolicy create(String argument) {
            if (argument == null) {
                return new SizePolicy();
            }
            try {
                return new SizePolicy(Long.parseLong(argument));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("size policy threshold must be a number of bytes: size:" + argument);
            }
        }
    }

    /** {@code fixed:PROTOCOL}: always that protocol (SOAP when the server does not speak it). */
    public static final class Fixed implements SelectionPolicyProvider {
        @Override
        public String name() {
            return "fixed";
        }

        @Override
        public String usage() {
            return "fixed:PROTOCOL";
        }

        @Override
        public SelectionPolicy create(String argument) {
            if (argument == null || argument.isEmpty()) {
                throw new IllegalArgumentException("fixed needs a protocol, as in fixed:grpc");
            }
            return new FixedPolicy(argument);
        }
    }
}
