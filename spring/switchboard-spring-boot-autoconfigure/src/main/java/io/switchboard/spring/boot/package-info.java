/**
 * Switchboard in a Spring Boot application: properties under {@code switchboard.*}, a
 * {@link io.switchboard.client.Switchboard} bean and stubs injectable by type
 * ({@link io.switchboard.spring.boot.ImportSwitchboardStubs}), components served from beans marked
 * {@link io.switchboard.spring.boot.SwitchboardComponent}, a health indicator and the meters on
 * Boot's registry. See docs/spring-boot.md.
 */
package io.switchboard.spring.boot;
