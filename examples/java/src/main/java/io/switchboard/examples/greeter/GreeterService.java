package io.switchboard.examples.greeter;

/**
 * The Greeter component: what {@code src/main/xsd/greeter.xsd} declares. The build generates the
 * interface {@link Greeter} from the schema; the plug-in's {@code <implementation>} names this class,
 * so that {@code switchboard serve Greeter --classpath target/greeter-1.0-SNAPSHOT.jar} finds it too.
 */
public final class GreeterService implements Greeter {
    @Override
    public String greet(String name) {
        return "Hello, " + (name == null || name.isBlank() ? "stranger" : name.strip()) + "!";
    }

    /** The mean of the values; NaN when there are none (absent or empty), as 0/0 would say. */
    @Override
    public double average(double[] values) {
        if (values == null || values.length == 0) {
            return Double.NaN;
        }
        double sum = 0;
        for (double value : values) {
            sum += value;
        }
        return sum / values.length;
    }
}
