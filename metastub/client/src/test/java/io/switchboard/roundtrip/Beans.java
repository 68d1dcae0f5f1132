package io.switchboard.roundtrip;

import io.switchboard.idl.ComplexTypeModel;
import io.switchboard.idl.FieldModel;
import io.switchboard.idl.OperationModel;
import io.switchboard.codec.dynamic.DynamicInterface;
import io.switchboard.codec.dynamic.DynamicList;
import io.switchboard.codec.dynamic.DynamicRecord;
import io.switchboard.codec.dynamic.DynamicType;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * Moves values between {@link DynamicRecord}s and the generated beans of the same schema, by
 * reflection on the beans' getters and setters: the properties generate one value and send it
 * through both kinds of stub. Invalid values (a lone surrogate, a required field that is null)
 * move too, so that each stub's own writer has to refuse them. Linked nodes keep their shape.
 */
final class Beans {
    private final DynamicInterface iface;
    private final CompiledInterfaces compiled;
    private final RandomSchemas.Schema schema;
    /** Java simple name of a bean class -> schema name of its type or message. */
    private final Map<String, String> schemaNames = new HashMap<>();

    Beans(DynamicInterface iface, CompiledInterfaces compiled, RandomSchemas.Schema schema) {
        this.iface = iface;
        this.compiled = compiled;
        this.schema = schema;
        for (String t : iface.model().types().keySet()) {
            schemaNames.put(className(t), t);
        }
        for (OperationModel op : iface.model().operations()) {
            for (ComplexTypeModel m : new ComplexTypeModel[] {op.request(), op.response(), op.fault()}) {
                if (m != null) {
                    schemaNames.put(className(m.name()), m.name());
                }
            }
        }
    }

    Object toBean(DynamicRecord record) {
        return toBean(record, new IdentityHashMap<>());
    }

    DynamicRecord fromBean(Object bean) {
        return (DynamicRecord) fromBean(bean, new IdentityHashMap<>());
    }

    private Object toBean(Object v, IdentityHashMap<Object, Object> done) {
        if (v instanceof DynamicRecord r) {
            Object known = done.get(r);
            if (known != null) {
                return known;
            }
            try {
                Class<?> c = compiled.beanClass(schema, r.type().name());
                Object bean = c.getConstructor().newInstance();
                done.put(r, bean);
                for (FieldModel f : r.type().model().fields()) {
                    Object value = r.get(f.name());
                    if (value != null) {
                        setter(c, f.name()).invoke(bean, toBean(value, done));
                    }
                }
                return bean;
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException(e);
            }
        }
        if (v instanceof DynamicList l) {
            try {
                Class<?> c = compiled.beanClass(schema, l.type().name());
                Object bean = c.getConstructor().newInstance();
                List<Object> items = new ArrayList<>();
                for (Object item : l) {
                    items.add(toBean(item, done));
                }
                c.getMethod("setItems", List.class).invoke(bean, items);
                return bean;
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException(e);
            }
        }
        if (v instanceof List<?> list) {
            List<Object> out = new ArrayList<>(list.size());
            for (Object item : list) {
                out.add(item == null ? null : toBean(item, done));
            }
            return out;
        }
        return v;   // scalars and primitive arrays are the same objects in both forms
    }

    private Object fromBean(Object bean, IdentityHashMap<Object, Object> done) {
        if (bean == null) {
            return null;
        }
        String name = schemaNames.get(bean.getClass().getSimpleName());
        if (name == null || bean.getClass().getClassLoader() != compiled.beanClass(schema, name).getClassLoader()) {
            if (bean instanceof List<?> list) {
                List<Object> out = new ArrayList<>(list.size());
                for (Object item : list) {
                    out.add(fromBean(item, done));
                }
                return out;
            }
            return bean;
        }
        Object known = done.get(bean);
        if (known != null) {
            return known;
        }
        try {
            DynamicType type = iface.model().types().containsKey(name) ? iface.type(name) : iface.message(name);
            if (type.heterogeneousList()) {
                List<?> items = (List<?>) bean.getClass().getMethod("getItems").invoke(bean);
                Object[] converted = new Object[items.size()];
                for (int i = 0; i < converted.length; i++) {
                    converted[i] = fromBean(items.get(i), done);
                }
                return type.newList(converted);
            }
            DynamicRecord r = type.newRecord();
            done.put(bean, r);
            for (FieldModel f : type.model().fields()) {
                Object value = bean.getClass().getMethod("get" + capitalize(f.name())).invoke(bean);
                r.set(f.name(), fromBean(value, done));
            }
            return r;
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }

    private static Method setter(Class<?> c, String field) {
        String name = "set" + capitalize(field);
        for (Method m : c.getMethods()) {
            if (m.getName().equals(name) && m.getParameterCount() == 1) {
                return m;
            }
        }
        throw new IllegalStateException(c + " has no " + name);
    }

    static String className(String schemaName) {
        return capitalize(schemaName);
    }

    private static String capitalize(String s) {
        return Character.toUpperCase(s.charAt(0)) + s.substring(1);
    }
}
