package io.switchboard.examples.springboot;

import io.switchboard.components.echo.EchoStub;
import java.util.Arrays;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.context.event.EventListener;
import org.springframework.stereotype.Component;

/** Calls the Echo component through the registry once the application is ready, and says how it went. */
@Component
public class EchoCheck {
    private static final Logger LOG = LoggerFactory.getLogger(EchoCheck.class);
    private final EchoStub echo;

    public EchoCheck(EchoStub echo) {
        this.echo = echo;
    }

    /** The values, sent to Echo and back. */
    public double[] roundTrip(double... values) {
        return echo.echoDoubles(values);
    }

    @EventListener(ApplicationReadyEvent.class)
    void checkOnce() {
        try {
            LOG.info("Echo answered {}", Arrays.toString(roundTrip(1, 2, 3)));
        } catch (RuntimeException e) {
            // Echo may start after this application: the stub looks it up again at its next call
            LOG.warn("Echo did not answer ({}); start it with ./switchboard serve echo", e.getMessage());
        }
    }
}
