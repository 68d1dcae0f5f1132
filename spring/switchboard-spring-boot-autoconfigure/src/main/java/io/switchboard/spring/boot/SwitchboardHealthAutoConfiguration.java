package io.switchboard.spring.boot;

import io.switchboard.client.Switchboard;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.health.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.actuate.health.HealthIndicator;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/** The {@code switchboard} health indicator, with the actuator on the class path; off with {@code management.health.switchboard.enabled=false}. */
@AutoConfiguration(after = {SwitchboardClientAutoConfiguration.class, SwitchboardServerAutoConfiguration.class})
@ConditionalOnClass(HealthIndicator.class)
@ConditionalOnBean(Switchboard.class)
@ConditionalOnEnabledHealthIndicator("switchboard")
public class SwitchboardHealthAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean(name = "switchboardHealthIndicator")
    SwitchboardHealthIndicator switchboardHealthIndicator(Switchboard switchboard,
            ObjectProvider<SwitchboardServerLifecycle> server) {
        return new SwitchboardHealthIndicator(switchboard, server);
    }
}
