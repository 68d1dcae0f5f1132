package io.switchboard.roundtrip;

import io.switchboard.idl.runtime.OperationDescriptor;
import io.switchboard.idl.runtime.ServiceDescriptor;
import io.switchboard.protocol.Skeleton;
import java.lang.reflect.Method;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Serves any generated interface whose responses have their requests' fields: answers each call
 * with a response holding the request's values, the same objects (so the answer travels back
 * exactly what arrived). Counts the calls it ran, so a test can see that a refused call never
 * reached it.
 */
final class MirrorSkeleton implements Skeleton {
    private final ServiceDescriptor descriptor;
    final AtomicInteger calls = new AtomicInteger();

    MirrorSkeleton(ServiceDescriptor descriptor) {
        this.descriptor = descriptor;
    }

    @Override
    public ServiceDescriptor descriptor() {
        return descriptor;
    }

    @Override
    public Object invoke(OperationDescriptor operation, Object request) {
        calls.incrementAndGet();
        try {
            Object response = operation.responseClass().getConstructor().newInstance();
            for (Method get : request.getClass().getMethods()) {
                if (get.getName().startsWith("get") && get.getParameterCount() == 0 && get.getDeclaringClass() == request.getClass()) {
                    Method set = response.getClass().getMethod("set" + get.getName().substring(3), get.getReturnType());
                    set.invoke(response, get.invoke(request));
                }
            }
            return response;
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot mirror " + operation + ": " + e, e);
        }
    }
}
