package io.switchboard.examples.springboot;

import io.switchboard.spring.boot.SwitchboardComponent;
import org.springframework.stereotype.Service;

/** The Greeter component, a bean like any other: marked, it is served and bound when the application is ready. */
@Service
@SwitchboardComponent
public class GreeterService implements Greeter {
    @Override
    public String greet(String name) {
        return "Hello, " + (name == null || name.isBlank() ? "stranger" : name.strip()) + "!";
    }

    /** The mean of the values; NaN when there are none, as 0/0 would say. */
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
