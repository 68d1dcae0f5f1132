package io.switchboard.spring.boot;

import io.micrometer.core.instrument.MeterRegistry;
import io.switchboard.metastub.MicrometerCallListener;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.context.annotation.Bean;

/**
 * Switchboard's meters on the application's {@link MeterRegistry} (the actuator's, or one of the
 * application's): the server's {@code switchboard.server.*} and the client's {@code switchboard.calls}
 * and byte counts. Ordered before the client so the customizers exist when the client connects.
 */
@AutoConfiguration(before = {SwitchboardClientAutoConfiguration.class, SwitchboardServerAutoConfiguration.class},
        afterName = {"org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration",
                "org.springframework.boot.actuate.autoconfigure.metrics.export.simple.SimpleMetricsExportAutoConfiguration"})
@ConditionalOnBean(MeterRegistry.class)
public class SwitchboardMetricsAutoConfiguration {

    @Bean
    SwitchboardServerCustomizer switchboardServerMeters(MeterRegistry meters) {
        return builder -> builder.meterRegistry(meters);
    }

    @Bean
    SwitchboardClientCustomizer switchboardClientMeters(MeterRegistry meters) {
        return builder -> builder.listener(new MicrometerCallListener(meters));
    }
}
