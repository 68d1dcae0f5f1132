package io.switchboard.spring.boot;

import io.switchboard.client.Switchboard;

/**
 * Adjusts the auto-configured {@link Switchboard} before it connects: every bean of this type is
 * applied, in order.
 *
 * <pre>{@code
 * @Bean
 * SwitchboardClientCustomizer audit() {
 *     return builder -> builder.interceptor(new AuditInterceptor());
 * }
 * }</pre>
 */
@FunctionalInterface
public interface SwitchboardClientCustomizer {
    void customize(Switchboard.Builder builder);
}
