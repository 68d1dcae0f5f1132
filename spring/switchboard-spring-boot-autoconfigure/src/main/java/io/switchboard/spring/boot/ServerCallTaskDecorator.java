package io.switchboard.spring.boot;

import io.switchboard.protocol.ServerCallContext;
import org.springframework.core.task.TaskDecorator;

/**
 * Runs each task in the Switchboard call of the thread that handed it over
 * ({@link ServerCallContext#wrap(Runnable)}): an {@code @Async} method an operation calls keeps its
 * caller's deadline and cancel on the meta-stub calls it makes. The server's auto-configuration
 * makes one for the application's task executor unless the application has a decorator of its
 * own (Spring Boot applies only one); compose it into yours then.
 *
 * <pre>{@code
 * @Bean
 * TaskDecorator taskDecorator() {
 *     TaskDecorator inCall = new ServerCallTaskDecorator();
 *     return task -> inCall.decorate(myDecorator.decorate(task));
 * }
 * }</pre>
 */
public final class ServerCallTaskDecorator implements TaskDecorator {
    @Override
    public Runnable decorate(Runnable task) {
        ServerCallContext call = ServerCallContext.current();
        return call == null ? task : call.wrap(task);
    }
}
