package io.switchboard.spring.boot;

import io.switchboard.server.ComponentServer;

/**
 * Adjusts the component server before it is built, when the application is ready: every bean of
 * this type is applied, in order.
 *
 * <pre>{@code
 * @Bean
 * SwitchboardServerCustomizer audit() {
 *     return builder -> builder.interceptor(new AuditInterceptor());
 * }
 * }</pre>
 */
@FunctionalInterface
public interface SwitchboardServerCustomizer {
    void customize(ComponentServer.Builder builder);
}
