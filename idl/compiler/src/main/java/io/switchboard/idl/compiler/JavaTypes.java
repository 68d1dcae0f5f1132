package io.switchboard.idl.compiler;

import com.squareup.javapoet.ArrayTypeName;
import com.squareup.javapoet.ClassName;
import com.squareup.javapoet.ParameterizedTypeName;
import com.squareup.javapoet.TypeName;
import io.switchboard.idl.FieldModel;
import io.switchboard.idl.ScalarType;
import java.util.List;
import java.util.Locale;

/** The Java mapping of schema fields; one place so beans, interface, skeleton and stub agree. */
final class JavaTypes {
    private final String javaPackage;

    JavaTypes(String javaPackage) {
        this.javaPackage = javaPackage;
    }

    ClassName typeClass(String schemaName) {
        return ClassName.get(javaPackage, className(schemaName));
    }

    /**
     * Required primitives stay primitive; optional or nillable ones are boxed; repeated numbers and
     * booleans are one primitive array; other repeated values are a {@code List}.
     */
    TypeName fieldType(FieldModel f) {
        if (f.isScalar()) {
            ScalarType s = f.scalar();
            if (f.repeated()) {
                if (s.isPrimitive()) {
                    return ArrayTypeName.of(primitive(s));
                }
                return ParameterizedTypeName.get(ClassName.get(List.class), reference(s));
            }
            if (s.isPrimitive() && !f.optional() && !f.nillable()) {
                return primitive(s);
            }
            return reference(s);
        }
        ClassName c = typeClass(f.complexType());
        return f.repeated() ? ParameterizedTypeName.get(ClassName.get(List.class), c) : c;
    }

    /** The Java class of one alternative of a heterogeneous list: a boxed scalar, String, byte[] or a bean. */
    TypeName alternativeType(FieldModel alternative) {
        return alternative.isScalar() ? reference(alternative.scalar()) : typeClass(alternative.complexType());
    }

    static boolean isPackedArray(FieldModel f) {
        return f.isScalar() && f.repeated() && f.scalar().isPrimitive();
    }

    private static TypeName primitive(ScalarType s) {
        return switch (s) {
            case BOOLEAN -> TypeName.BOOLEAN;
            case BYTE -> TypeName.BYTE;
            case SHORT -> TypeName.SHORT;
            case INT -> TypeName.INT;
            case LONG -> TypeName.LONG;
            case FLOAT -> TypeName.FLOAT;
            case DOUBLE -> TypeName.DOUBLE;
            default -> throw new IllegalArgumentException(s + " is not primitive");
        };
    }

    private static TypeName reference(ScalarType s) {
        return switch (s) {
            case STRING -> ClassName.get(String.class);
            case BYTES -> ArrayTypeName.of(TypeName.BYTE);
            case DATE_TIME -> ClassName.get(java.time.OffsetDateTime.class);
            default -> primitive(s).box();
        };
    }

    static String className(String schemaName) {
        return Character.toUpperCase(schemaName.charAt(0)) + schemaName.substring(1);
    }

    static String capitalize(String s) {
        return s.substring(0, 1).toUpperCase(Locale.ROOT) + s.substring(1);
    }

    static String getter(FieldModel f) {
        return "get" + capitalize(f.name());
    }

    static String setter(FieldModel f) {
        return "set" + capitalize(f.name());
    }
}
