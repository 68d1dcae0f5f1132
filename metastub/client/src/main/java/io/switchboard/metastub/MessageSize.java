package io.switchboard.metastub;

import io.switchboard.idl.ComplexTypeModel;
import io.switchboard.idl.FieldModel;
import io.switchboard.idl.InterfaceModel;
import io.switchboard.idl.ScalarType;
import io.switchboard.idl.runtime.HeterogeneousList;
import io.switchboard.idl.runtime.OperationDescriptor;
import io.switchboard.codec.dynamic.DynamicList;
import io.switchboard.codec.dynamic.DynamicRecord;
import java.lang.invoke.LambdaMetafactory;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.ArrayDeque;
import java.util.Collection;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

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
 * on per call. The whole per-call decision is budgeted at 2 µs: the walk allocates nothing
 * for flat messages and reads only the fields whose size varies.
 */
public final class MessageSize {
    /** Framing per non-array value: a tag and a length. */
    private static final int OVERHEAD = 2;

    private final InterfaceModel model;
    private final Map<Class<?>, Plan> plans = new ConcurrentHashMap<>();
    private final Map<String, ComplexTypeModel> requestTypes = new ConcurrentHashMap<>();

    private final Map<String, ComplexTypeModel> responseTypes = new ConcurrentHashMap<>();
    private final Map<Class<?>, java.util.Optional<ComplexTypeModel>> alternativeTypes = new ConcurrentHashMap<>();
    private final Map<ComplexTypeModel, Plan> dynamicPlans = new ConcurrentHashMap<>();

    public MessageSize(InterfaceModel model) {
        this.model = model;
    }

    /**
     * The estimated payload of a request of {@code operation}; as {@link #estimate(Object, ComplexTypeModel, long)}.
     * The operation's request type is looked up once: {@code OperationDescriptor.model()} searches
     * the interface's operations, which costs more than a small message's whole estimate.
     */
    public long estimateRequest(Object request, OperationDescriptor operation, long cap) {
        ComplexTypeModel type = requestTypes.get(operation.name());
        if (type == null) {
            type = requestTypes.computeIfAbsent(operation.name(), n -> operation.model().request());
        }
        return estimate(request, type, cap);
    }

    /** The payload of a response of {@code operation}, or a value above {@code cap} as soon as it passes it. */
    public long estimateResponse(Object response, OperationDescriptor operation, long cap) {
        ComplexTypeModel type = responseTypes.get(operation.name());
        if (type == null) {
            type = responseTypes.computeIfAbsent(operation.name(), n -> operation.model().response());
        }
        return type == null ? 0 : estimate(response, type, cap);
    }

    /** Like {@link #estimateRequest}, but a walk cut short at the cap comes back as {@code ~total} (negative). */
    long walkRequest(Object request, OperationDescriptor operation, long cap) {
        ComplexTypeModel type = requestTypes.get(operation.name());
        if (type == null) {
            type = requestTypes.computeIfAbsent(operation.name(), n -> operation.model().request());
        }
        return walk(request, type, cap);
    }

    /** The estimated payload of {@code message}, or a value above {@code cap} as soon as it passes it. */
    public long estimate(Object message, ComplexTypeModel type, long cap) {
        long w = walk(message, type, cap);
        return w < 0 ? ~w : w;
    }

    /**
     * The payload, exact when the walk finished; {@code ~total} (a negative number) when it stopped
     * at the cap with parts of the message not counted. A large array is counted whole, so a
     * message past the cap may still be exact.
     */
    private long walk(Object message, ComplexTypeModel type, long cap) {
        if (message == null) {
            return 0;
        }
        // This runs on every call a size-aware policy decides, so it allocates only what the
        // message needs: the work stack at the first nested value, the identity set where a linked
        // structure branches. Stack entries are (type, value) pairs pushed flat, no pair objects.
        long total = 0;
        ArrayDeque<Object> work = null;
        IdentityHashMap<Object, Boolean> seen = null;
        // Along a single path of linked nodes (a list: nothing else waits on the work stack) a
        // cycle is found as Brent's algorithm finds one: the node met at each power-of-two step
        // is kept, and the path has come round when it meets it again, at most three times the
        // path's nodes in. Remembering every node instead was most of the walk's time on a long
        // list (docs/benchmarks/adaptive-sweep.md). Once the walk branches, every linked node is
        // remembered, and a shared node is counted once.
        Object kept = null;
        int power = 1;
        int steps = 0;
        Plan plan = null;
        Object value = message;
        ComplexTypeModel t = type;
        while (true) {
            boolean visit = true;
            // a list held twice is counted once; a list holding itself ends the walk
            if (t.recursive() || t.heterogeneousList()) {
                if (seen == null && (work == null || work.isEmpty())) {
                    if (value == kept) {
                        visit = false;   // the path came round: a cycle, whose nodes are counted
                    } else if (++steps == power) {
                        kept = value;
                        power <<= 1;
                        steps = 0;
                    }
                } else {
                    if (seen == null) {
                        seen = new IdentityHashMap<>();
                    }
                    visit = seen.put(value, Boolean.TRUE) == null;   // a shared node or a cycle is sent once
                }
            }
            if (t.heterogeneousList() && visit) {
                // elements are scalars or beans of the alternatives; beans go on the work stack
                total += OVERHEAD;
                for (Object element : ((HeterogeneousList) value).getItems()) {
                    if (total > cap) {
                        return ~total;
                    }
                    ComplexTypeModel target = element == null ? null : alternativeType(t, element);
                    if (target == null) {
                        total += OVERHEAD + boxedScalarBytes(element);
                    } else {
                        if (work == null) {
                            work = new ArrayDeque<>();
                        }
                        work.push(target);
                        work.push(element);
                    }
                }
            } else if (visit && !t.heterogeneousList()) {
                if (plan == null || plan.cls != value.getClass() || plan.type != t) {
                    plan = plan(value.getClass(), t);
                }
                total += plan.fixedBytes;
                for (int i = 0; i < plan.fields.length; i++) {
                    if (total > cap) {
                        return ~total;   // fields of this value are left uncounted
                    }
                    FieldModel f = plan.fields[i];
                    Object v = plan.get(i, value);
                    if (v == null) {
                        continue;
                    }
                    if (f.isScalar()) {
                        total += OVERHEAD + scalarBytes(f, v);
                    } else {
                        ComplexTypeModel target = plan.targets[i];
                        if (work == null) {
                            work = new ArrayDeque<>();
                        }
                        if (f.repeated()) {
                            for (Object element : (Collection<?>) v) {
                                if (element != null) {
                                    work.push(target);
                                    work.push(element);
                                }
                            }
                        } else {
                            work.push(target);
                            work.push(v);
                        }
                        total += OVERHEAD;
                    }
                }
            }
            if (work == null || work.isEmpty()) {
                return total;
            }
            if (total > cap) {
                return ~total;
            }
            value = work.pop();
            t = (ComplexTypeModel) work.pop();
        }
    }

    /**
     * The type of a heterogeneous list's element: a dynamic record's or list's own type, else the
     * alternative whose generated bean class the element has; null for scalars.
     */
    private ComplexTypeModel alternativeType(ComplexTypeModel list, Object element) {
        if (element instanceof DynamicRecord r) {
            return r.type().model();
        }
        if (element instanceof DynamicList l) {
            return l.type().model();
        }
        return alternativeTypes.computeIfAbsent(element.getClass(), c -> java.util.Optional.ofNullable(list.fields().stream()
                .filter(a -> a.complexType() != null)
                .filter(a -> (Character.toUpperCase(a.complexType().charAt(0)) + a.complexType().substring(1))
                        .equals(c.getSimpleName()))
                .map(a -> model.type(a.complexType())).findFirst().orElse(null))).orElse(null);
    }

    private static long boxedScalarBytes(Object v) {
        if (v instanceof String s) {
            return s.length();
        } else if (v instanceof byte[] b) {
            return b.length;
        } else if (v instanceof Byte || v instanceof Boolean) {
            return 1;
        } else if (v instanceof Short) {
            return 2;
        } else if (v instanceof Integer || v instanceof Float) {
            return 4;
        }
        return 8;
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
        if (cls == DynamicRecord.class) {
            // records of an interface read at run time share one class: plan them by type
            return dynamicPlans.computeIfAbsent(type, t -> new Plan(t, model));
        }
        Plan p = plans.get(cls);
        if (p == null) {
            p = new Plan(cls, type, model);
            plans.put(cls, p);
        }
        return p;
    }

    /**
     * How to size one generated bean class: required primitive fields have a fixed size and are
     * summed once here (calling their getters would only box the values); the other fields are
     * read through getters looked up once, in model order.
     */
    private static final class Plan {
        final Class<?> cls;
        final ComplexTypeModel type;
        final long fixedBytes;
        final FieldModel[] fields;
        final ComplexTypeModel[] targets;
        final Function<Object, Object>[] getters;

        Plan(Class<?> cls, ComplexTypeModel type, InterfaceModel model) {
            this.cls = cls;
            this.type = type;
            List<FieldModel> variable = new java.util.ArrayList<>();
            List<Function<Object, Object>> handles = new java.util.ArrayList<>();
            long fixed = 0;
            for (FieldModel f : type.fields()) {
                String name = "get" + Character.toUpperCase(f.name().charAt(0)) + f.name().substring(1);
                java.lang.reflect.Method m;
                try {
                    m = cls.getMethod(name);
                } catch (NoSuchMethodException e) {
                    throw new IllegalStateException(cls.getName() + " has no getter " + name + " for field "
                            + f.name() + " of " + type.name(), e);
                }
                if (f.isScalar() && !f.repeated() && m.getReturnType().isPrimitive()) {
                    fixed += OVERHEAD + f.scalar().fixedBytes();   // never null, always the same size
                    continue;
                }
                handles.add(getter(cls, m));
                variable.add(f);
            }
            this.fixedBytes = fixed;
            this.fields = variable.toArray(FieldModel[]::new);
            this.getters = getters(handles);
            this.targets = targets(fields, model);
        }

        /** The plan of a {@link DynamicRecord} type: fields read by position, required primitives fixed as above. */
        Plan(ComplexTypeModel type, InterfaceModel model) {
            this.cls = DynamicRecord.class;
            this.type = type;
            List<FieldModel> variable = new java.util.ArrayList<>();
            List<Function<Object, Object>> handles = new java.util.ArrayList<>();
            long fixed = 0;
            for (FieldModel f : type.fields()) {
                if (f.isScalar() && !f.repeated() && f.scalar().isPrimitive() && !f.optional() && !f.nillable()) {
                    fixed += OVERHEAD + f.scalar().fixedBytes();
                    continue;
                }
                String name = f.name();
                handles.add(record -> ((DynamicRecord) record).get(name));
                variable.add(f);
            }
            this.fixedBytes = fixed;
            this.fields = variable.toArray(FieldModel[]::new);
            this.getters = getters(handles);
            this.targets = targets(fields, model);
        }

        @SuppressWarnings("unchecked")
        private static Function<Object, Object>[] getters(List<Function<Object, Object>> handles) {
            return handles.toArray(Function[]::new);
        }

        private static ComplexTypeModel[] targets(FieldModel[] fields, InterfaceModel model) {
            ComplexTypeModel[] targets = new ComplexTypeModel[fields.length];
            for (int i = 0; i < fields.length; i++) {
                targets[i] = fields[i].isScalar() ? null : model.type(fields[i].complexType());
            }
            return targets;
        }

        Object get(int i, Object bean) {
            return getters[i].apply(bean);
        }

        /**
         * The getter as a lambda, spun once in the bean's own class loader: a method handle held in
         * an array is not inlined and cost about 25 ns a call, a lambda a few. Falls back to the
         * method handle where the bean's package is not open to us.
         */
        @SuppressWarnings("unchecked")
        private static Function<Object, Object> getter(Class<?> cls, java.lang.reflect.Method m) {
            try {
                MethodHandles.Lookup lookup = MethodHandles.privateLookupIn(cls, MethodHandles.lookup());
                MethodHandle handle = lookup.unreflect(m);
                return (Function<Object, Object>) LambdaMetafactory.metafactory(lookup, "apply",
                        MethodType.methodType(Function.class), MethodType.methodType(Object.class, Object.class),
                        handle, MethodType.methodType(m.getReturnType(), cls)).getTarget().invokeExact();
            } catch (Throwable lambdaFailed) {
                try {
                    MethodHandle handle = MethodHandles.publicLookup().unreflect(m)
                            .asType(MethodType.methodType(Object.class, Object.class));
                    return bean -> {
                        try {
                            return handle.invokeExact(bean);
                        } catch (RuntimeException | Error e) {
                            throw e;
                        } catch (Throwable t) {
                            throw new IllegalStateException(t);
                        }
                    };
                } catch (IllegalAccessException e) {
                    throw new IllegalStateException(cls.getName() + "." + m.getName() + " is not accessible", e);
                }
            }
        }
    }
}
