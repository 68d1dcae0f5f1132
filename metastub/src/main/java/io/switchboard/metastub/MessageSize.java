package io.switchboard.metastub;

import io.switchboard.idl.ComplexTypeModel;
import io.switchboard.idl.FieldModel;
import io.switchboard.idl.InterfaceModel;
import io.switchboard.idl.ScalarType;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.ArrayDeque;
import java.util.Collection;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Estimates the payload of a message from its shape: array lengths times element sizes, string
 * lengths, and linked structures counted node by node. The walk stops as soon as the estimate
 * passes a cap, so a caller that only needs "above or below N bytes" pays for at most about N
 * bytes' worth of fields, whatever the message holds.
 *
 * <p>Sizes are those of the binary encoding (8 bytes a double, UTF-8 length of strings, a few
 * bytes of framing per value); XML is several times larger but grows in proportion.
 *
 * <p>Field getters are looked up once per class from the interface model; nothing is reflected
 * on per call.
 */
public final class MessageSize {
    /** Framing per non-array value: a tag and a length. */
    private static final int OVERHEAD = 2;

    private final InterfaceModel model;
    private final Map<Class<?>, Plan> plans = new ConcurrentHashMap<>();

    public MessageSize(InterfaceModel model) {
        this.model = model;
    }

    /** The estimated payload of {@code message}, or a value above {@code cap} as soon as it passes it. */
    public long estimate(Object message, ComplexTypeModel type, long cap) {
        if (message == null) {
            return 0;
        }
        long total = 0;
        ArrayDeque<Object[]> work = new ArrayDeque<>();
        IdentityHashMap<Object, Boolean> seen = new IdentityHashMap<>();
        work.push(new Object[] {message, type});
        while (!work.isEmpty() && total <= cap) {
            Object[] item = work.pop();
            Object value = item[0];
            ComplexTypeModel t = (ComplexTypeModel) item[1];
            if (t.recursive() && seen.put(value, Boolean.TRUE) != null) {
                continue;   // a shared node or a cycle is sent once
            }
            Plan plan = plan(value.getClass(), t);
            for (int i = 0; i < plan.fields.length && total <= cap; i++) {
                FieldModel f = plan.fields[i];
                Object v = plan.get(i, value);
                if (v == null) {
                    continue;
                }
                if (f.isScalar()) {
                    total += OVERHEAD + scalarBytes(f, v);
                } else {
                    ComplexTypeModel target = model.type(f.complexType());
                    if (f.repeated()) {
                        for (Object element : (Collection<?>) v) {
                            if (element != null) {
                                work.push(new Object[] {element, target});
                            }
                        }
                    } else {
                        work.push(new Object[] {v, target});
                    }
                    total += OVERHEAD;
                }
            }
        }
        return total;
    }

    private static long scalarBytes(FieldModel f, Object v) {
        ScalarType s = f.scalar();
        if (f.repeated()) {
            if (v instanceof double[] a) {
                return 8L * a.length;
            } else if (v instanceof float[] a) {
                return 4L * a.length;
            } else if (v instanceof long[] a) {
                return 8L * a.length;
            } else if (v instanceof int[] a) {
                return 4L * a.length;
            } else if (v instanceof short[] a) {
                return 2L * a.length;
            } else if (v instanceof byte[] a) {
                return a.length;
            } else if (v instanceof boolean[] a) {
                return a.length;
            } else if (v instanceof List<?> l) {
                long n = 0;
                for (Object o : l) {
                    n += OVERHEAD + (o == null ? 0 : single(s, o));
                }
                return n;
            }
            return 0;
        }
        return single(s, v);
    }

    private static long single(ScalarType s, Object v) {
        return switch (s) {
            case STRING -> ((String) v).length();
            case BYTES -> ((byte[]) v).length;
            default -> s.fixedBytes();
        };
    }

    private Plan plan(Class<?> cls, ComplexTypeModel type) {
        Plan p = plans.get(cls);
        if (p == null) {
            p = new Plan(cls, type);
            plans.put(cls, p);
        }
        return p;
    }

    /** The getters of one generated bean class, in model order. */
    private static final class Plan {
        final FieldModel[] fields;
        final MethodHandle[] getters;

        Plan(Class<?> cls, ComplexTypeModel type) {
            fields = type.fields().toArray(FieldModel[]::new);
            getters = new MethodHandle[fields.length];
            MethodHandles.Lookup lookup = MethodHandles.publicLookup();
            for (int i = 0; i < fields.length; i++) {
                String name = "get" + Character.toUpperCase(fields[i].name().charAt(0)) + fields[i].name().substring(1);
                try {
                    java.lang.reflect.Method m = cls.getMethod(name);
                    getters[i] = lookup.unreflect(m).asType(MethodType.methodType(Object.class, Object.class));
                } catch (ReflectiveOperationException e) {
                    throw new IllegalStateException(cls.getName() + " has no getter " + name + " for field "
                            + fields[i].name() + " of " + type.name(), e);
                }
            }
        }

        Object get(int i, Object bean) {
            try {
                return getters[i].invokeExact(bean);
            } catch (RuntimeException | Error e) {
                throw e;
            } catch (Throwable t) {
                throw new IllegalStateException(t);
            }
        }
    }
}
