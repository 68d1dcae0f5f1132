package io.switchboard.idl.compiler;

import com.squareup.javapoet.ClassName;
import com.squareup.javapoet.CodeBlock;
import com.squareup.javapoet.MethodSpec;
import com.squareup.javapoet.ParameterizedTypeName;
import com.squareup.javapoet.TypeName;
import com.squareup.javapoet.TypeSpec;
import com.squareup.javapoet.WildcardTypeName;
import io.switchboard.idl.ComplexTypeModel;
import io.switchboard.idl.FieldModel;
import io.switchboard.idl.OperationModel;
import io.switchboard.idl.ScalarType;
import io.switchboard.codec.binary.BinaryCodec;
import io.switchboard.codec.binary.BinaryReader;
import io.switchboard.codec.binary.BinaryWriter;
import java.util.ArrayList;
import java.util.List;
import javax.lang.model.element.Modifier;

/**
 * Generates {@code XxxBinaryCodec}: the packed binary encoding of a component's beans as plain
 * getter and setter calls, one write and one read method per type, in schema order. Generated
 * rather than reflective so that a call costs what hand-written code would, and so that a reader
 * can see exactly what goes on the wire.
 */
final class CodecGenerator {
    private static final TypeName CLASS_OF_ANY = ParameterizedTypeName.get(ClassName.get(Class.class),
            WildcardTypeName.subtypeOf(Object.class));

    private final CompileContext ctx;
    private final ClassName self;

    CodecGenerator(CompileContext ctx) {
        this.ctx = ctx;
        this.self = className(ctx);
    }

    static ClassName className(CompileContext ctx) {
        return ClassName.get(ctx.javaPackage, ctx.model.componentName() + "BinaryCodec");
    }

    TypeSpec generate() {
        TypeSpec.Builder b = TypeSpec.classBuilder(self).addModifiers(Modifier.PUBLIC, Modifier.FINAL)
                .superclass(BinaryCodec.class)
                .addJavadoc("The packed binary encoding of $L's messages (see {@link $T}): fields in schema order,\n"
                        + "linked structures as a node table. Used by the bulk protocol through\n"
                        + "{@code $LComponent.DESCRIPTOR.codec(BinaryCodec.class)}.\n",
                        ctx.model.componentName(), io.switchboard.codec.binary.WireFormat.class,
                        ctx.model.componentName())
                .addJavadoc(ctx.generatedNote());

        List<ComplexTypeModel> messages = ctx.messages();
        MethodSpec.Builder write = MethodSpec.methodBuilder("writeMessage").addAnnotation(Override.class)
                .addModifiers(Modifier.PUBLIC).addParameter(BinaryWriter.class, "out").addParameter(Object.class, "message");
        MethodSpec.Builder read = MethodSpec.methodBuilder("readMessage").addAnnotation(Override.class)
                .addModifiers(Modifier.PUBLIC).returns(Object.class)
                .addParameter(BinaryReader.class, "in").addParameter(CLASS_OF_ANY, "type");
        for (ComplexTypeModel m : messages) {
            ClassName t = ctx.types.typeClass(m.name());
            write.beginControlFlow("if (message instanceof $T m)", t)
                    .addStatement("write$L(out, m)", t.simpleName()).addStatement("return").endControlFlow();
            read.beginControlFlow("if (type == $T.class)", t).addStatement("return read$L(in)", t.simpleName())
                    .endControlFlow();
        }
        write.addStatement("throw new $T($S + message.getClass().getName())", IllegalArgumentException.class,
                "not a message of " + ctx.model.componentName() + ": ");
        read.addStatement("throw new $T($S + type.getName())", IllegalArgumentException.class,
                "not a message of " + ctx.model.componentName() + ": ");
        b.addMethod(write.build()).addMethod(read.build());

        List<ComplexTypeModel> nodeTypes = ctx.model.types().values().stream().filter(ComplexTypeModel::recursive).toList();
        if (!nodeTypes.isEmpty()) {
            addNodeMethods(b, nodeTypes);
        }
        for (ComplexTypeModel m : messages) {
            b.addMethod(writeMessageMethod(m)).addMethod(readMessageMethod(m));
        }
        for (ComplexTypeModel t : ctx.model.types().values()) {
            if (t.heterogeneousList()) {
                b.addMethod(writeChoices(t)).addMethod(readChoices(t));
            } else if (t.recursive()) {
                b.addMethod(writeFields(t, "write" + ctx.types.typeClass(t.name()).simpleName() + "Fields", false));
                b.addMethod(readNodeFields(t));
            } else {
                b.addMethod(writeFields(t, "write" + ctx.types.typeClass(t.name()).simpleName(), true));
                b.addMethod(readStruct(t));
            }
        }
        return b.build();
    }

    private void addNodeMethods(TypeSpec.Builder b, List<ComplexTypeModel> nodeTypes) {
        MethodSpec.Builder type = MethodSpec.methodBuilder("nodeType").addAnnotation(Override.class)
                .addModifiers(Modifier.PUBLIC).returns(int.class).addParameter(Object.class, "node");
        MethodSpec.Builder write = MethodSpec.methodBuilder("writeNode").addAnnotation(Override.class)
                .addModifiers(Modifier.PUBLIC).addParameter(BinaryWriter.class, "out").addParameter(Object.class, "node");
        MethodSpec.Builder create = MethodSpec.methodBuilder("newNode").addAnnotation(Override.class)
                .addModifiers(Modifier.PUBLIC).returns(Object.class).addParameter(int.class, "type")
                .beginControlFlow("switch (type)");
        MethodSpec.Builder read = MethodSpec.methodBuilder("readNode").addAnnotation(Override.class)
                .addModifiers(Modifier.PUBLIC).addParameter(BinaryReader.class, "in").addParameter(Object.class, "node");
        for (int i = 0; i < nodeTypes.size(); i++) {
            ClassName t = ctx.types.typeClass(nodeTypes.get(i).name());
            type.beginControlFlow("if (node instanceof $T)", t).addStatement("return $L", i).endControlFlow();
            write.beginControlFlow("if (node instanceof $T n)", t)
                    .addStatement("write$LFields(out, n)", t.simpleName()).addStatement("return").endControlFlow();
            create.addStatement("case $L: return new $T()", i, t);
            read.beginControlFlow("if (node instanceof $T n)", t)
                    .addStatement("read$LFields(in, n)", t.simpleName()).addStatement("return").endControlFlow();
        }
        String unknown = "not a linked node of " + ctx.model.componentName() + ": ";
        type.addStatement("throw new $T($S + node.getClass().getName())", IllegalArgumentException.class, unknown);
        write.addStatement("throw new $T($S + node.getClass().getName())", IllegalArgumentException.class, unknown);
        create.addStatement("default: return null").endControlFlow();
        read.addStatement("throw new $T($S + node.getClass().getName())", IllegalArgumentException.class, unknown);
        b.addMethod(type.build()).addMethod(write.build()).addMethod(create.build()).addMethod(read.build());
    }

    private MethodSpec writeMessageMethod(ComplexTypeModel m) {
        ClassName t = ctx.types.typeClass(m.name());
        MethodSpec.Builder w = MethodSpec.methodBuilder("write" + t.simpleName())
                .addModifiers(Modifier.PRIVATE, Modifier.STATIC)
                .addParameter(BinaryWriter.class, "out").addParameter(t, "v");
        if (ctx.graphTypesReachableFrom(m).isEmpty()) {
            w.addStatement("out.writeNodes(null)");
        } else {
            w.addStatement("out.writeNodes(v)");
        }
        for (FieldModel f : m.fields()) {
            w.addStatement(writeField(m, f));
        }
        return w.build();
    }

    private MethodSpec readMessageMethod(ComplexTypeModel m) {
        ClassName t = ctx.types.typeClass(m.name());
        MethodSpec.Builder r = MethodSpec.methodBuilder("read" + t.simpleName())
                .addModifiers(Modifier.PRIVATE, Modifier.STATIC).returns(t)
                .addParameter(BinaryReader.class, "in")
                .addStatement("in.readNodes()")
                .addStatement("$T v = new $T()", t, t);
        for (FieldModel f : m.fields()) {
            r.addStatement(readField(m, f));
        }
        return r.addStatement("return v").build();
    }

    /** Struct types write their own tag (NULL or STRUCT); node types are written from the node table. */
    private MethodSpec writeFields(ComplexTypeModel type, String name, boolean struct) {
        ClassName t = ctx.types.typeClass(type.name());
        MethodSpec.Builder w = MethodSpec.methodBuilder(name).addModifiers(Modifier.STATIC)
                .addParameter(BinaryWriter.class, "out").addParameter(t, "v");
        if (struct) {
            w.beginControlFlow("if (!out.beginStruct(v))").addStatement("return").endControlFlow();
            if (type.ndArray()) {
                w.addStatement("out.checkNdArray(v, $S)", type.name());
            }
        }
        for (FieldModel f : type.fields()) {
            w.addStatement(writeField(type, f));
        }
        return w.build();
    }

    private MethodSpec readStruct(ComplexTypeModel type) {
        ClassName t = ctx.types.typeClass(type.name());
        MethodSpec.Builder r = MethodSpec.methodBuilder("read" + t.simpleName()).addModifiers(Modifier.STATIC).returns(t)
                .addParameter(BinaryReader.class, "in").addParameter(String.class, "field")
                .beginControlFlow("if (!in.beginStruct(field))").addStatement("return null").endControlFlow()
                .addStatement("$T v = new $T()", t, t);
        for (FieldModel f : type.fields()) {
            r.addStatement(readField(type, f));
        }
        if (type.ndArray()) {
            r.addStatement("in.checkNdArray(v, field)");
        }
        return r.addStatement("return v").build();
    }

    private MethodSpec readNodeFields(ComplexTypeModel type) {
        ClassName t = ctx.types.typeClass(type.name());
        MethodSpec.Builder r = MethodSpec.methodBuilder("read" + t.simpleName() + "Fields").addModifiers(Modifier.STATIC)
                .addParameter(BinaryReader.class, "in").addParameter(t, "v");
        for (FieldModel f : type.fields()) {
            r.addStatement(readField(type, f));
        }
        return r.build();
    }

    /**
     * A heterogeneous list: CHOICES, the count, then per element its alternative (schema order) and
     * its value. The writer refuses null elements, foreign classes and too deep nesting.
     */
    private MethodSpec writeChoices(ComplexTypeModel type) {
        ClassName t = ctx.types.typeClass(type.name());
        MethodSpec.Builder w = MethodSpec.methodBuilder("write" + t.simpleName()).addModifiers(Modifier.STATIC)
                .addParameter(BinaryWriter.class, "out").addParameter(t, "v")
                .beginControlFlow("if (!out.beginChoices(v))").addStatement("return").endControlFlow()
                .beginControlFlow("for (Object e : v.getItems())");
        for (int i = 0; i < type.fields().size(); i++) {
            FieldModel alternative = type.fields().get(i);
            TypeName java = ctx.types.alternativeType(alternative);
            if (i == 0) {
                w.beginControlFlow("if (e instanceof $T x)", java);
            } else {
                w.nextControlFlow("else if (e instanceof $T x)", java);
            }
            w.addStatement("out.writeVarint($L)", i);
            if (alternative.isScalar() && alternative.scalar() == ScalarType.STRING) {
                w.addStatement("out.writeString(x, $S)", type.name() + "." + alternative.name());
            } else if (alternative.isScalar()) {
                w.addStatement("out.write$L(x)", scalarSuffix(alternative));
            } else {
                w.addStatement("write$L(out, x)", ctx.types.typeClass(alternative.complexType()).simpleName());
            }
        }
        return w.nextControlFlow("else").addStatement("throw out.notAnAlternative(e, v)")
                .endControlFlow().endControlFlow().addStatement("out.endChoices()").build();
    }

    private MethodSpec readChoices(ComplexTypeModel type) {
        ClassName t = ctx.types.typeClass(type.name());
        MethodSpec.Builder r = MethodSpec.methodBuilder("read" + t.simpleName()).addModifiers(Modifier.STATIC).returns(t)
                .addParameter(BinaryReader.class, "in").addParameter(String.class, "field")
                .addStatement("int count = in.beginChoices(field)")
                .beginControlFlow("if (count < 0)").addStatement("return null").endControlFlow()
                .addStatement("$T<Object> items = new $T<>(Math.min(count, 1024))", List.class, ArrayList.class)
                .beginControlFlow("for (int i = 0; i < count; i++)")
                .beginControlFlow("switch (in.readAlternative(field, $L))", type.fields().size());
        for (int i = 0; i < type.fields().size(); i++) {
            FieldModel alternative = type.fields().get(i);
            CodeBlock value;
            if (alternative.isScalar()) {
                // primitives are read as required values (NULL refused); the others are checked
                value = alternative.scalar().isPrimitive() ? CodeBlock.of("in.read$L(field)", scalarSuffix(alternative))
                        : CodeBlock.of("in.element(in.read$L(field), field)", scalarSuffix(alternative));
            } else {
                value = CodeBlock.of("in.element(read$L(in, field), field)",
                        ctx.types.typeClass(alternative.complexType()).simpleName());
            }
            r.addStatement("case $L -> items.add($L)", i, value);
        }
        return r.addStatement("default -> throw new $T()", IllegalStateException.class)
                .endControlFlow().endControlFlow()
                .addStatement("in.endChoices()")
                .addStatement("$T v = new $T()", t, t)
                .addStatement("v.setItems(items)")
                .addStatement("return v").build();
    }

    /**
     * A required field that is not nillable and has a reference type: null is refused on both sides
     * ({@code out.required}, {@code in.required}), as the XML readers refuse the element missing.
     */
    private static boolean requiredReference(FieldModel f) {
        return !f.optional() && !f.repeated() && !f.nillable() && !(f.isScalar() && f.scalar().isPrimitive());
    }

    private CodeBlock writeField(ComplexTypeModel owner, FieldModel f) {
        String name = owner.name() + "." + f.name();
        CodeBlock get = requiredReference(f) ? CodeBlock.of("out.required(v.$L(), $S)", JavaTypes.getter(f), name)
                : CodeBlock.of("v.$L()", JavaTypes.getter(f));
        if (f.graphReference()) {
            return f.repeated() ? CodeBlock.of("out.writeRefs($L, $S)", get, name) : CodeBlock.of("out.writeRef($L)", get);
        }
        if (f.complexType() != null) {
            String method = "write" + ctx.types.typeClass(f.complexType()).simpleName();
            return f.repeated() ? CodeBlock.of("out.writeList($L, $T::$L)", get, self, method)
                    : CodeBlock.of("$L(out, $L)", method, get);
        }
        if (f.scalar() == ScalarType.STRING || f.scalar() == ScalarType.DATE_TIME) {
            // checked against what xs:string and xs:dateTime can hold, so the error names the field
            return CodeBlock.of("out.write$L($L, $S)", scalarSuffix(f), get, name);
        }
        return CodeBlock.of("out.write$L($L)", scalarSuffix(f), get);
    }

    private CodeBlock readField(ComplexTypeModel owner, FieldModel f) {
        String set = "v." + JavaTypes.setter(f);
        String name = owner.name() + "." + f.name();
        CodeBlock read;
        if (f.graphReference()) {
            read = CodeBlock.of("in.$L($S, $T.class)", f.repeated() ? "readRefs" : "readRef", name,
                    ctx.types.typeClass(f.complexType()));
        } else if (f.complexType() != null) {
            String method = "read" + ctx.types.typeClass(f.complexType()).simpleName();
            read = f.repeated() ? CodeBlock.of("in.readList($S, $T::$L)", name, self, method)
                    : CodeBlock.of("$L(in, $S)", method, name);
        } else {
            TypeName javaType = ctx.types.fieldType(f);
            boolean orNull = !f.repeated() && f.scalar().isPrimitive() && !javaType.isPrimitive();
            read = CodeBlock.of("in.read$L$L($S)", scalarSuffix(f), orNull ? "OrNull" : "", name);
        }
        if (requiredReference(f)) {
            read = CodeBlock.of("in.required($L, $S)", read, name);
        }
        return CodeBlock.of("$L($L)", set, read);
    }

    /** The writer and reader method suffix of a scalar field: {@code Double}, {@code Doubles}, {@code Strings}. */
    private static String scalarSuffix(FieldModel f) {
        ScalarType s = f.scalar();
        if (f.repeated()) {
            return switch (s) {
                case BOOLEAN -> "Booleans";
                case BYTE -> "PackedBytes";
                case SHORT -> "Shorts";
                case INT -> "Ints";
                case LONG -> "Longs";
                case FLOAT -> "Floats";
                case DOUBLE -> "Doubles";
                case STRING -> "Strings";
                case BYTES -> "BytesList";
                case DATE_TIME -> "DateTimes";
            };
        }
        return switch (s) {
            case BOOLEAN -> "Boolean";
            case BYTE -> "Byte";
            case SHORT -> "Short";
            case INT -> "Int";
            case LONG -> "Long";
            case FLOAT -> "Float";
            case DOUBLE -> "Double";
            case STRING -> "String";
            case BYTES -> "Bytes";
            case DATE_TIME -> "DateTime";
        };
    }

}
