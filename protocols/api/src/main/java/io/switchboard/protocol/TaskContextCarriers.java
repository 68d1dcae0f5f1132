package io.switchboard.protocol;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiFunction;

/** The carriers on the class path, found once. */
final class TaskContextCarriers {
    private static final List<TaskContextCarrier> CARRIERS = load();
    /** Carriers whose failure has been logged: once each, not once per task. */
    private static final Set<Class<?>> LOGGED = ConcurrentHashMap.newKeySet();

    private TaskContextCarriers() {
    }

    /** {@code task} wrapped by every carrier; one that fails is left out, so the work still goes over. */
    static Runnable carry(Runnable task) {
        return carry(task, TaskContextCarrier::carry);
    }

    static <T> Callable<T> carry(Callable<T> task) {
        return carry(task, TaskContextCarrier::carry);
    }

    private static <W> W carry(W task, BiFunction<TaskContextCarrier, W, W> wrap) {
        for (TaskContextCarrier carrier : CARRIERS) {
            try {
                task = Objects.requireNonNull(wrap.apply(carrier, task), "a carried task");
            } catch (RuntimeException e) {
                failed(carrier, e);
            }
        }
        return task;
    }

    private static void failed(TaskContextCarrier carrier, RuntimeException e) {
        if (!LOGGED.add(carrier.getClass())) {
            return;
        }
        System.getLogger(TaskContextCarrier.class.getName()).log(System.Logger.Level.WARNING,
                carrier.getClass().getName() + " failed to carry a task's context, which goes without it (logged once): " + e);
    }

    /**
     * A carrier whose library is missing (left out of a build) is skipped, not fatal. The loader's
     * iterator moves past a provider that fails; the bound guards against one that does not.
     */
    private static List<TaskContextCarrier> load() {
        List<TaskContextCarrier> found = new ArrayList<>();
        var providers = ServiceLoader.load(TaskContextCarrier.class, TaskContextCarrier.class.getClassLoader()).iterator();
        for (int failures = 0; failures < 64; ) {
            try {
                if (!providers.hasNext()) {
                    break;
                }
                found.add(providers.next());
            } catch (ServiceConfigurationError | LinkageError e) {
                failures++;
                System.getLogger(TaskContextCarrier.class.getName()).log(System.Logger.Level.WARNING,
                        "a task context carrier cannot be loaded and is skipped: " + e);
            }
        }
        return List.copyOf(found);
    }
}
