package io.switchboard.spring.boot;

import io.switchboard.idl.runtime.ServiceDescriptor;
import io.switchboard.protocol.Channel;
import io.switchboard.protocol.Skeleton;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.Optional;

/**
 * Finds what the interface compiler generated beside an interface or a stub: for an interface
 * {@code p.Echo} and a stub {@code p.EchoStub}, the class {@code p.EchoComponent} with its
 * {@code DESCRIPTOR} and {@code skeleton(Echo)}. Reflection on that naming only, so the
 * auto-configuration needs no list of components.
 */
final class GeneratedCode {
    private static final String COMPONENT = "Component";
    private static final String STUB = "Stub";

    private GeneratedCode() {
    }

    /** The skeleton serving {@code bean} through the first generated component interface it implements. */
    static Optional<Skeleton> skeletonFor(Object bean, Class<?> beanClass) {
        for (Class<?> type = beanClass; type != null; type = type.getSuperclass()) {
            for (Class<?> iface : type.getInterfaces()) {
                Optional<Method> factory = skeletonFactory(iface);
                if (factory.isPresent()) {
                    return Optional.of((Skeleton) invoke(factory.get(), bean));
                }
            }
        }
        return Optional.empty();
    }

    /** The descriptor of the component a generated stub class calls. */
    static ServiceDescriptor descriptorOfStub(Class<?> stubClass) {
        String name = stubClass.getName();
        if (!name.endsWith(STUB)) {
            throw new IllegalArgumentException(name + " is not a generated stub (its name ends in " + STUB + ")");
        }
        Class<?> component = load(name.substring(0, name.length() - STUB.length()) + COMPONENT, stubClass.getClassLoader())
                .orElseThrow(() -> new IllegalArgumentException("no generated " + COMPONENT + " class beside " + name));
        try {
            return (ServiceDescriptor) component.getField("DESCRIPTOR").get(null);
        } catch (ReflectiveOperationException e) {
            throw new IllegalArgumentException(component.getName() + " has no public DESCRIPTOR", e);
        }
    }

    /** A stub of {@code stubClass} over {@code channel}, by its generated {@code (Channel)} constructor. */
    static <T> T newStub(Class<T> stubClass, Channel channel) {
        try {
            return stubClass.getConstructor(Channel.class).newInstance(channel);
        } catch (InvocationTargetException e) {
            throw new IllegalStateException("could not make a " + stubClass.getSimpleName(), e.getCause());
        } catch (ReflectiveOperationException e) {
            throw new IllegalArgumentException(stubClass.getName() + " has no public (Channel) constructor", e);
        }
    }

    private static Optional<Method> skeletonFactory(Class<?> iface) {
        return load(iface.getName() + COMPONENT, iface.getClassLoader()).flatMap(component -> {
            try {
                Method m = component.getMethod("skeleton", iface);
                boolean fits = Modifier.isStatic(m.getModifiers()) && Skeleton.class.isAssignableFrom(m.getReturnType());
                return fits ? Optional.of(m) : Optional.empty();
            } catch (NoSuchMethodException e) {
                return Optional.empty();
            }
        });
    }

    private static Optional<Class<?>> load(String name, ClassLoader loader) {
        try {
            return Optional.of(Class.forName(name, false, loader));
        } catch (ClassNotFoundException e) {
            return Optional.empty();
        }
    }

    private static Object invoke(Method m, Object arg) {
        try {
            return m.invoke(null, arg);
        } catch (InvocationTargetException e) {
            throw new IllegalStateException("could not make the skeleton of " + arg, e.getCause());
        } catch (IllegalAccessException e) {
            throw new IllegalStateException(e);
        }
    }
}
