package io.switchboard.idl.compiler;

import com.squareup.javapoet.ArrayTypeName;
import com.squareup.javapoet.ClassName;
import com.squareup.javapoet.CodeBlock;
import com.squareup.javapoet.FieldSpec;
import com.squareup.javapoet.MethodSpec;
import com.squareup.javapoet.ParameterizedTypeName;
import com.squareup.javapoet.TypeName;
import com.squareup.javapoet.TypeSpec;
import io.switchboard.codec.message.MessageLimits;
import io.switchboard.codec.message.WireFormatException;
import io.switchboard.codec.proto.ProtoArrays;
import io.switchboard.codec.proto.ProtoCodec;
import io.switchboard.codec.proto.ProtoInput;
import io.switchboard.codec.proto.ProtoNulls;
import io.switchboard.codec.proto.ProtoOutput;
import io.switchboard.codec.proto.ProtoPartWriter;
import io.switchboard.codec.proto.ProtoReadState;
import io.switchboard.codec.proto.ProtoWriteState;
import io.switchboard.idl.ComplexTypeModel;
import io.switchboard.idl.FieldModel;
import io.switchboard.idl.OperationModel;
import io.switchboard.idl.ScalarType;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.lang.model.element.Modifier;

/**
 * Generates {@code XxxProtoCodec}: the component's messages as the typed {@code .proto}'s protobuf
 * messages ({@link ProtoCodec}), as plain getter and setter calls. Per schema type a size, a write
 * and a read method; per operation message a part writer (the size pass in its constructor) and a
 * reader that merges parts. Packed arrays go through {@link ProtoOutput}'s and {@link ProtoArrays}'
 * bulk copies; linked values through the node table, numbered and resolved without recursion.
 */
final class ProtoCodecGenerator {
    private static final int NODES = 2046;
    private static final int NULLS = ProtoNulls.FIELD;
    private static final ClassName W = ClassName.get(ProtoWriteState.class);
    private static final ClassName R = ClassName.get(ProtoReadState.class);
    private static final ClassName OUT = ClassName.get(ProtoOutput.class);
    private static final ClassName IN = ClassName.get(ProtoInput.class);
    private static final ClassName WFE = ClassName.get(WireFormatException.class);

    private final CompileContext ctx;
    private final ClassName self;
    /** Reference fields (owner type, field) in slot order, for the resolver. */
    private final Map<String, FieldModel> refSlots = new LinkedHashMap<>();
    private final Map<String, ComplexTypeModel> refOwners = new LinkedHashMap<>();

    ProtoCodecGenerator(CompileContext ctx) {
        this.ctx = ctx;
        this.self = className(ctx);
    }

    static ClassName className(CompileContext ctx) {
        return ClassName.get(ctx.javaPackage, ctx.model.componentName() + "ProtoCodec");
    }

    TypeSpec generate() {
        TypeSpec.Builder b = TypeSpec.classBuilder(self).addModifiers(Modifier.PUBLIC, Modifier.FINAL)
                .superclass(ProtoCodec.class)
                .addJavadoc("$L's messages as the protobuf messages of its typed {@code .proto} (see {@link $T}):\n"
                        + "exact protobuf bytes, written in parts and read back from them. Used by the gRPC protocol\n"
                        + "through {@code $LComponent.DESCRIPTOR.codec(ProtoCodec.class)}.\n",
                        ctx.model.componentName(), ProtoCodec.class, ctx.model.componentName())
                .addJavadoc(ctx.generatedNote());
        List<ComplexTypeModel> messages = ctx.messages();
        // reference slots first: every reader names them
        for (ComplexTypeModel t : ctx.model.types().values()) {
            collectRefSlots(t);
        }
        for (ComplexTypeModel m : messages) {
            collectRefSlots(m);
        }
        MethodSpec.Builder writer = MethodSpec.methodBuilder("writer").addAnnotation(Override.class)
                .addModifiers(Modifier.PUBLIC).returns(ProtoCodec.Writer.class)
                .addParameter(String.class, "message").addParameter(Object.class, "value").addParameter(int.class, "maxNodes")
                .beginControlFlow("switch (message)");
        MethodSpec.Builder reader = MethodSpec.methodBuilder("reader").addAnnotation(Override.class)
                .addModifiers(Modifier.PUBLIC).returns(ProtoCodec.Reader.class)
                .addParameter(String.class, "message").addParameter(MessageLimits.class, "limits")
                .addParameter(long.class, "expectedBytes")
                .beginControlFlow("switch (message)");
        for (ComplexTypeModel m : messages) {
            ClassName t = ctx.types.typeClass(m.name());
            writer.addStatement("case $S: return new $LWriter(($T) value, maxNodes)", m.name(), t.simpleName(), t);
            reader.addStatement("case $S: return new $LReader(limits, expectedBytes)", m.name(), t.simpleName());
        }
        writer.addStatement("default: throw new $T($S + message)", IllegalArgumentException.class,
                "not a message of " + ctx.model.componentName() + ": ").endControlFlow();
        reader.addStatement("default: throw new $T($S + message)", IllegalArgumentException.class,
                "not a message of " + ctx.model.componentName() + ": ").endControlFlow();
        b.addMethod(writer.build()).addMethod(reader.build());
        if (!refSlots.isEmpty()) {
            b.addType(resolver());
            b.addField(FieldSpec.builder(ClassName.get(ProtoReadState.Resolver.class), "RESOLVER",
                    Modifier.PRIVATE, Modifier.STATIC, Modifier.FINAL).initializer("new Resolver()").build());
        }
        for (ComplexTypeModel t : ctx.model.types().values()) {
            if (t.heterogeneousList()) {
                b.addMethod(listSize(t)).addMethod(listWrite(t)).addMethod(listRead(t));
            } else {
                b.addMethod(structSize(t)).addMethod(structWrite(t)).addMethod(structRead(t)).addMethod(structCheck(t));
            }
        }
        for (MethodSpec h : helpers()) {
            b.addMethod(h);
        }
        for (ComplexTypeModel m : messages) {
            b.addType(messageWriter(m)).addType(messageReader(m));
        }
        return b.build();
    }

    // ---- names and kinds

    private String typeName(ComplexTypeModel t) {
        return ctx.types.typeClass(t.name()).simpleName();
    }

    private static String name(ComplexTypeModel owner, FieldModel f) {
        return owner.name() + "." + f.name();
    }

    /** A repeated field in protobuf terms (a repeated byte is one {@code bytes} value). */
    private static boolean protoRepeated(FieldModel f) {
        return f.repeated() && !(f.isScalar() && f.scalar() == ScalarType.BYTE);
    }

    /** A primitive array sent packed: boolean, short, int, long, float, double. */
    private static boolean packed(FieldModel f) {
        return f.repeated() && f.isScalar() && f.scalar().isPrimitive() && f.scalar() != ScalarType.BYTE;
    }

    /** A repeated field whose elements may be null (a List of references). */
    private static boolean nullableElements(FieldModel f) {
        return protoRepeated(f) && !packed(f) && !f.graphReference();
    }

    private static int width(FieldModel f) {
        return switch (f.scalar()) {
            case BOOLEAN -> 1;
            case SHORT, INT, FLOAT -> 4;
            default -> 8;
        };
    }

    private static boolean requiredReference(FieldModel f) {
        return !f.optional() && !f.repeated() && !f.nillable() && !(f.isScalar() && f.scalar().isPrimitive());
    }

    private boolean hasNulls(ComplexTypeModel t) {
        return t.fields().stream().anyMatch(ProtoCodecGenerator::protoRepeated);
    }

    private void collectRefSlots(ComplexTypeModel t) {
        if (t.heterogeneousList()) {
            return;
        }
        for (FieldModel f : t.fields()) {
            if (f.graphReference()) {
                refSlots.putIfAbsent(name(t, f), f);
                refOwners.putIfAbsent(name(t, f), t);
            }
        }
    }

    private int slot(ComplexTypeModel owner, FieldModel f) {
        return new ArrayList<>(refSlots.keySet()).indexOf(name(owner, f));
    }

    private TypeName listOf(FieldModel f) {
        return ctx.types.fieldType(f);
    }

    /** The element class of a List field. */
    private TypeName elementType(FieldModel f) {
        return ((ParameterizedTypeName) ctx.types.fieldType(f)).typeArguments.get(0);
    }

    // ---- size pass: adds to `n`, notes nulls in `nulls`

    private CodeBlock sizeField(ComplexTypeModel owner, FieldModel f, int num) {
        String nm = name(owner, f);
        String get = "v." + JavaTypes.getter(f) + "()";
        CodeBlock.Builder c = CodeBlock.builder();
        if (f.graphReference()) {
            if (!f.repeated()) {
                if (requiredReference(f)) {
                    c.addStatement("if ($L == null) throw $T.malformed($S, $S)", get, WFE, nm, "required and not nillable, but null");
                }
                return c.addStatement("{ int ref = w.number($L); if (ref != 0) n += $T.uint32Size($L, ref); }", get, W, num)
                        .build();
            }
            return c.beginControlFlow("")
                    .addStatement("$T l = $L", listOf(f), get)
                    .beginControlFlow("if (l == null)").addStatement("nulls = $T.list(nulls, $L)", ProtoNulls.class, num)
                    .nextControlFlow("else if (!l.isEmpty())").addStatement("n += $T.delimitedSize($L, refsSize(l, w, $S))", W, num, nm)
                    .endControlFlow().endControlFlow().build();
        }
        if (f.complexType() != null) {
            ComplexTypeModel target = ctx.model.type(f.complexType());
            String size = "size" + typeName(target);
            if (!f.repeated()) {
                c.beginControlFlow("").addStatement("$T x = $L", listOf(f), get).beginControlFlow("if (x != null)")
                        .addStatement("int slot = w.reserve()")
                        .addStatement("n += $T.delimitedSize($L, w.sized(slot, $L(x, w)))", W, num, size);
                if (requiredReference(f)) {
                    c.nextControlFlow("else").addStatement("throw $T.malformed($S, $S)", WFE, nm, "required and not nillable, but null");
                }
                return c.endControlFlow().endControlFlow().build();
            }
            return c.beginControlFlow("").addStatement("$T l = $L", listOf(f), get)
                    .beginControlFlow("if (l == null)").addStatement("nulls = $T.list(nulls, $L)", ProtoNulls.class, num)
                    .nextControlFlow("else").beginControlFlow("for (int i = 0; i < l.size(); i++)")
                    .addStatement("$T e = l.get(i)", elementType(f))
                    .beginControlFlow("if (e == null)").addStatement("nulls = $T.element(nulls, $L, i)", ProtoNulls.class, num)
                    .addStatement("n += $T.delimitedSize($L, 0)", W, num)
                    .nextControlFlow("else").addStatement("int slot = w.reserve()")
                    .addStatement("n += $T.delimitedSize($L, w.sized(slot, $L(e, w)))", W, num, size)
                    .endControlFlow().endControlFlow().endControlFlow().endControlFlow().build();
        }
        ScalarType s = f.scalar();
        if (f.repeated()) {
            if (s == ScalarType.BYTE) {
                return c.addStatement("{ byte[] x = $L; if (x != null) n += $T.delimitedSize($L, x.length); }", get, W, num)
                        .build();
            }
            if (packed(f)) {
                return c.beginControlFlow("").addStatement("$T x = $L", listOf(f), get)
                        .beginControlFlow("if (x == null)").addStatement("nulls = $T.list(nulls, $L)", ProtoNulls.class, num)
                        .nextControlFlow("else if (x.length > 0)")
                        .addStatement("n += $T.delimitedSize($L, $LL * x.length)", W, num, width(f))
                        .endControlFlow().endControlFlow().build();
            }
            return c.beginControlFlow("").addStatement("$T l = $L", listOf(f), get)
                    .beginControlFlow("if (l == null)").addStatement("nulls = $T.list(nulls, $L)", ProtoNulls.class, num)
                    .nextControlFlow("else").beginControlFlow("for (int i = 0; i < l.size(); i++)")
                    .addStatement("$T e = l.get(i)", elementType(f))
                    .beginControlFlow("if (e == null)").addStatement("nulls = $T.element(nulls, $L, i)", ProtoNulls.class, num)
                    .addStatement("n += $T.delimitedSize($L, 0)", W, num)
                    .nextControlFlow("else").addStatement("n += $L", scalarSize(s, num, "e", nm))
                    .endControlFlow().endControlFlow().endControlFlow().endControlFlow().build();
        }
        TypeName java = ctx.types.fieldType(f);
        if (java.isPrimitive()) {
            return c.addStatement("{ $T x = $L; if ($L) n += $L; }", java, get, nonZero(s, "x"), scalarSize(s, num, "x", nm))
                    .build();
        }
        c.beginControlFlow("").addStatement("$T x = $L", java, get)
                .beginControlFlow("if (x != null)").addStatement("n += $L", scalarSize(s, num, "x", nm));
        if (requiredReference(f)) {
            c.nextControlFlow("else").addStatement("throw $T.malformed($S, $S)", WFE, nm, "required and not nillable, but null");
        }
        return c.endControlFlow().endControlFlow().build();
    }

    private static String nonZero(ScalarType s, String x) {
        return switch (s) {
            case BOOLEAN -> x;
            case FLOAT -> "Float.floatToRawIntBits(" + x + ") != 0";
            case DOUBLE -> "Double.doubleToRawLongBits(" + x + ") != 0";
            default -> x + " != 0";
        };
    }

    /** The size of one scalar value with its tag (a value that is set). */
    private static CodeBlock scalarSize(ScalarType s, int num, String x, String nm) {
        return switch (s) {
            case BOOLEAN -> CodeBlock.of("$T.tagSize($L) + 1", W, num);
            case BYTE, SHORT, INT -> CodeBlock.of("$T.int32Size($L, $L)", W, num, x);
            case LONG -> CodeBlock.of("$T.int64Size($L, $L)", W, num, x);
            case FLOAT -> CodeBlock.of("$T.tagSize($L) + 4", W, num);
            case DOUBLE -> CodeBlock.of("$T.tagSize($L) + 8", W, num);
            case STRING -> CodeBlock.of("$T.stringSize($L, $L, $S)", W, num, x, nm);
            case BYTES -> CodeBlock.of("$T.delimitedSize($L, $L.length)", W, num, x);
            case DATE_TIME -> CodeBlock.of("$T.delimitedSize($L, $T.dateTimeBodySize($L, $S))", W, num, W, x, nm);
        };
    }

    // ---- write pass

    private CodeBlock writeField(ComplexTypeModel owner, FieldModel f, int num) {
        String get = "v." + JavaTypes.getter(f) + "()";
        CodeBlock.Builder c = CodeBlock.builder();
        if (f.graphReference()) {
            if (!f.repeated()) {
                return c.addStatement("{ int ref = w.number($L); if (ref != 0) out.writeUInt32($L, ref); }", get, num).build();
            }
            return c.addStatement("{ $T l = $L; if (l != null && !l.isEmpty()) writeRefs(out, $L, l, w); }", listOf(f), get, num)
                    .build();
        }
        if (f.complexType() != null) {
            String write = "write" + typeName(ctx.model.type(f.complexType()));
            if (!f.repeated()) {
                return c.beginControlFlow("").addStatement("$T x = $L", listOf(f), get).beginControlFlow("if (x != null)")
                        .addStatement("out.writeLengthDelimited($L, w.nextSize())", num).addStatement("$L(out, x, w)", write)
                        .endControlFlow().endControlFlow().build();
            }
            return c.beginControlFlow("if ($L != null)", get).add(typeElements(f, num, get, "0", "l.size()"))
                    .endControlFlow().build();
        }
        ScalarType s = f.scalar();
        if (f.repeated()) {
            if (s == ScalarType.BYTE) {
                return c.addStatement("{ byte[] x = $L; if (x != null) out.writeBytes($L, x, 0, x.length); }", get, num).build();
            }
            if (packed(f)) {
                return c.addStatement("{ $T x = $L; if (x != null) out.$L($L, x, 0, x.length); }", listOf(f), get,
                        packedWriter(s), num).build();
            }
            return c.addStatement("{ $T l = $L; if (l != null) writeRange$L(out, $L, l, 0, l.size()); }", listOf(f), get,
                    rangeSuffix(f), num).build();
        }
        TypeName java = ctx.types.fieldType(f);
        if (java.isPrimitive()) {
            return c.addStatement("{ $T x = $L; if ($L) $L; }", java, get, nonZero(s, "x"), scalarWrite(s, num, "x")).build();
        }
        return c.addStatement("{ $T x = $L; if (x != null) $L; }", java, get, scalarWrite(s, num, "x")).build();
    }

    private static String packedWriter(ScalarType s) {
        return switch (s) {
            case BOOLEAN -> "writePackedBools";
            case SHORT -> "writePackedShorts";
            case INT -> "writePackedSFixed32";
            case LONG -> "writePackedSFixed64";
            case FLOAT -> "writePackedFloats";
            default -> "writePackedDoubles";
        };
    }

    private static CodeBlock scalarWrite(ScalarType s, int num, String x) {
        return switch (s) {
            case BOOLEAN -> CodeBlock.of("out.writeBool($L, $L)", num, x);
            case BYTE, SHORT, INT -> CodeBlock.of("out.writeInt32($L, $L)", num, x);
            case LONG -> CodeBlock.of("out.writeInt64($L, $L)", num, x);
            case FLOAT -> CodeBlock.of("out.writeFloat($L, $L)", num, x);
            case DOUBLE -> CodeBlock.of("out.writeDouble($L, $L)", num, x);
            case STRING -> CodeBlock.of("out.writeString($L, $L)", num, x);
            case BYTES -> CodeBlock.of("out.writeBytes($L, $L, 0, $L.length)", num, x, x);
            case DATE_TIME -> CodeBlock.of("out.writeDateTime($L, $L)", num, x);
        };
    }

    /** The suffix of the range writer of a List field: its element type's name. */
    private String rangeSuffix(FieldModel f) {
        if (f.complexType() != null) {
            return typeName(ctx.model.type(f.complexType()));
        }
        return switch (f.scalar()) {
            case STRING -> "Strings";
            case BYTES -> "BytesList";
            default -> "DateTimes";
        };
    }

    /** Range writers of List fields: elements [from, to), null as an empty value. */
    private List<MethodSpec> rangeWriters() {
        List<MethodSpec> methods = new ArrayList<>();
        TypeName strings = ParameterizedTypeName.get(ClassName.get(List.class), ClassName.get(String.class));
        TypeName bytes = ParameterizedTypeName.get(ClassName.get(List.class), ArrayTypeName.of(TypeName.BYTE));
        TypeName dates = ParameterizedTypeName.get(ClassName.get(List.class), ClassName.get(java.time.OffsetDateTime.class));
        methods.add(range("Strings", strings, "out.writeString(field, e)"));
        methods.add(range("BytesList", bytes, "out.writeBytes(field, e, 0, e.length)"));
        methods.add(range("DateTimes", dates, "out.writeDateTime(field, e)"));
        return methods;
    }

    private MethodSpec range(String suffix, TypeName list, String write) {
        return MethodSpec.methodBuilder("writeRange" + suffix).addModifiers(Modifier.PRIVATE, Modifier.STATIC)
                .addParameter(OUT, "out").addParameter(int.class, "field").addParameter(list, "l")
                .addParameter(int.class, "from").addParameter(int.class, "to")
                .beginControlFlow("for (int i = from; i < to; i++)")
                .addStatement("var e = l.get(i)")
                .beginControlFlow("if (e == null)").addStatement("out.writeLengthDelimited(field, 0)")
                .nextControlFlow("else").addStatement(write).endControlFlow()
                .endControlFlow().build();
    }

    // ---- struct types (and linked node types: their reference fields hold node numbers)

    private MethodSpec structSize(ComplexTypeModel t) {
        ClassName c = ctx.types.typeClass(t.name());
        MethodSpec.Builder m = MethodSpec.methodBuilder("size" + typeName(t)).addModifiers(Modifier.STATIC)
                .returns(long.class).addParameter(c, "v").addParameter(W, "w")
                .addStatement("long n = 0");
        if (hasNulls(t)) {
            m.addStatement("$T nulls = null", ProtoNulls.class);
        }
        if (t.ndArray()) {
            m.addStatement("String problem = io.switchboard.codec.NdArrays.inconsistency(v)")
                    .addStatement("if (problem != null) throw $T.malformed($S, $S + problem)", WFE, t.name(), "n-d array ");
        }
        for (int i = 0; i < t.fields().size(); i++) {
            m.addCode(sizeField(t, t.fields().get(i), i + 1));
        }
        if (hasNulls(t)) {
            m.addStatement("if (nulls != null) n += nulls.fieldSize()");
        }
        return m.addStatement("return n").build();
    }

    private MethodSpec structWrite(ComplexTypeModel t) {
        ClassName c = ctx.types.typeClass(t.name());
        MethodSpec.Builder m = MethodSpec.methodBuilder("write" + typeName(t)).addModifiers(Modifier.STATIC)
                .addParameter(OUT, "out").addParameter(c, "v").addParameter(W, "w");
        for (int i = 0; i < t.fields().size(); i++) {
            m.addCode(writeField(t, t.fields().get(i), i + 1));
        }
        if (hasNulls(t)) {
            m.addCode(nullsOf(t)).addStatement("if (nulls != null) nulls.write(out)");
        }
        return m.build();
    }

    /** Recomputes the nulls of a value in the write pass (cheap: only repeated fields are looked at). */
    private CodeBlock nullsOf(ComplexTypeModel t) {
        CodeBlock.Builder c = CodeBlock.builder().addStatement("$T nulls = null", ProtoNulls.class);
        for (int i = 0; i < t.fields().size(); i++) {
            FieldModel f = t.fields().get(i);
            if (!protoRepeated(f)) {
                continue;
            }
            String get = "v." + JavaTypes.getter(f) + "()";
            if (nullableElements(f)) {
                c.beginControlFlow("").addStatement("$T l = $L", listOf(f), get)
                        .beginControlFlow("if (l == null)").addStatement("nulls = $T.list(nulls, $L)", ProtoNulls.class, i + 1)
                        .nextControlFlow("else").beginControlFlow("for (int i = 0; i < l.size(); i++)")
                        .addStatement("if (l.get(i) == null) nulls = $T.element(nulls, $L, i)", ProtoNulls.class, i + 1)
                        .endControlFlow().endControlFlow().endControlFlow();
            } else {
                c.addStatement("if ($L == null) nulls = $T.list(nulls, $L)", get, ProtoNulls.class, i + 1);
            }
        }
        return c.build();
    }

    private MethodSpec structRead(ComplexTypeModel t) {
        ClassName c = ctx.types.typeClass(t.name());
        MethodSpec.Builder m = MethodSpec.methodBuilder("read" + typeName(t)).addModifiers(Modifier.STATIC)
                .returns(c).addParameter(IN, "in").addParameter(R, "r").addParameter(c, "into")
                .addParameter(boolean.class, "element")
                .addJavadoc("Reads one occurrence (its tag read), merging it into {@code into} when not null. An element of\n"
                        + "a repeated field ({@code element}) is checked by its owner once null elements are known.\n")
                .addStatement("int outer = in.beginMessage(in.readLength())")
                .addStatement("$T v = into != null ? into : new $T()", c, c);
        m.addCode(readBody(t, false));
        m.addStatement("in.endMessage(outer)");
        m.addCode(finishBody(t, false));
        m.addStatement("if (!element) check$L(v, r)", typeName(t));
        return m.addStatement("return v").build();
    }

    /** The checks of a struct value that need it whole: required values present, an n-d array's shape. */
    private MethodSpec structCheck(ComplexTypeModel t) {
        MethodSpec.Builder m = MethodSpec.methodBuilder("check" + typeName(t)).addModifiers(Modifier.STATIC)
                .addParameter(ctx.types.typeClass(t.name()), "v").addParameter(R, "r");
        for (FieldModel f : t.fields()) {
            if (requiredReference(f) && f.graphReference()) {
                m.addStatement("r.required(v, $L)", slot(t, f)); // checked once references are resolved
            } else if (requiredReference(f)) {
                m.addStatement("if (v.$L() == null) throw $T.malformed($S, $S)", JavaTypes.getter(f), WFE, name(t, f),
                        "required and not nillable, but absent");
            }
        }
        if (t.ndArray()) {
            m.addStatement("String problem = io.switchboard.codec.NdArrays.inconsistency(v)")
                    .addStatement("if (problem != null) throw $T.malformed($S, $S + problem)", WFE, t.name(), "n-d array ");
        }
        return m.build();
    }

    private static ClassName accumulatorClass(ScalarType s) {
        return switch (s) {
            case BOOLEAN -> ClassName.get(ProtoArrays.Booleans.class);
            case SHORT, INT -> ClassName.get(ProtoArrays.Ints.class);
            case LONG -> ClassName.get(ProtoArrays.Longs.class);
            case FLOAT -> ClassName.get(ProtoArrays.Floats.class);
            default -> ClassName.get(ProtoArrays.Doubles.class);
        };
    }

    private static String acc(FieldModel f) {
        return "a" + JavaTypes.capitalize(f.name());
    }

    /**
     * The tag loop of a struct or message: {@code v} is the bean; packed fields append to their
     * accumulators, List fields to the bean's list (created when absent), singles set or merge.
     */
    private CodeBlock readBody(ComplexTypeModel t, boolean topLevel) {
        CodeBlock.Builder c = CodeBlock.builder();
        if (!topLevel) {
            for (FieldModel f : t.fields()) {
                if (packed(f)) {
                    ClassName a = accumulatorClass(f.scalar());
                    c.addStatement("$T $L = new $T(false)", a, acc(f), a);
                    c.addStatement("$L.prepend(v.$L())", acc(f), JavaTypes.getter(f));
                }
            }
            if (hasNulls(t)) {
                c.addStatement("$T nulls = null", ProtoNulls.class);
            }
        }
        for (FieldModel f : t.fields()) {
            if (protoRepeated(f) && !packed(f)) {
                c.addStatement("if (v.$L() == null) v.$L(new $T<>())", JavaTypes.getter(f), JavaTypes.setter(f),
                        ArrayList.class);
            }
        }
        c.beginControlFlow("for (int tag = in.readTag(); tag != 0; tag = in.readTag())")
                .beginControlFlow("switch (tag >>> 3)");
        for (int i = 0; i < t.fields().size(); i++) {
            FieldModel f = t.fields().get(i);
            c.add("case $L -> {\n$>", i + 1).addStatement("r.at($S)", name(t, f)).add(readCase(t, f)).add("$<}\n");
        }
        if (topLevel && !ctx.graphTypesReachableFrom(t).isEmpty()) {
            // a refusal inside the node table names the node: Type[node i].field
            c.add("case $L -> {\n$>", NODES).addStatement("r.at($S)", t.name() + ".sb_nodes")
                    .addStatement("int nodeIndex = r.nodeCount()")
                    .beginControlFlow("try").add(readNode(t))
                    .nextControlFlow("catch ($T e)", WFE).addStatement("throw e.inNode(nodeIndex)").endControlFlow()
                    .add("$<}\n");
        }
        if (hasNulls(t)) {
            c.add("case $L -> {\n$>", NULLS).addStatement("r.at($S)", t.name() + ".sb_nulls")
                    .addStatement("$T.expect(tag, 2, $S)", R, t.name() + ".sb_nulls")
                    .addStatement("nulls = $T.read(nulls, in, r)", ProtoNulls.class).add("$<}\n");
        }
        c.addStatement("default -> in.skipField(tag)");
        return c.endControlFlow().endControlFlow().addStatement("r.at(null)").build();
    }

    /** After the tag loop (a struct) or the last part (a message): arrays set, nulls applied, required checked. */
    private CodeBlock finishBody(ComplexTypeModel t, boolean topLevel) {
        CodeBlock.Builder c = CodeBlock.builder();
        for (FieldModel f : t.fields()) {
            if (packed(f)) {
                c.addStatement("v.$L($L.$L)", JavaTypes.setter(f), acc(f),
                        f.scalar() == ScalarType.SHORT ? "toShorts(" + quote(name(t, f)) + ")" : "toArray()");
            }
        }
        if (hasNulls(t)) {
            List<String> repeated = new ArrayList<>();
            List<String> elements = new ArrayList<>();
            for (int i = 0; i < t.fields().size(); i++) {
                if (protoRepeated(t.fields().get(i))) {
                    repeated.add(Integer.toString(i + 1));
                }
                if (nullableElements(t.fields().get(i))) {
                    elements.add(Integer.toString(i + 1));
                }
            }
            c.beginControlFlow("if (nulls != null)")
                    .addStatement("nulls.check($S, new int[] {$L}, new int[] {$L})", t.name(), String.join(", ", repeated),
                            String.join(", ", elements));
            for (int i = 0; i < t.fields().size(); i++) {
                FieldModel f = t.fields().get(i);
                if (!protoRepeated(f)) {
                    continue;
                }
                if (nullableElements(f)) {
                    c.addStatement("nulls.applyTo($L, v.$L(), $S)", i + 1, JavaTypes.getter(f), name(t, f));
                }
                c.addStatement("if (nulls.isNull($L, v.$L(), $S)) v.$L(null)", i + 1, JavaTypes.getter(f), name(t, f),
                        JavaTypes.setter(f));
            }
            c.endControlFlow();
        }
        for (FieldModel f : t.fields()) {
            if (protoRepeated(f) && f.complexType() != null && !f.graphReference()
                    && !ctx.model.type(f.complexType()).heterogeneousList()) {
                // the elements, now that null elements are known
                c.addStatement("if (v.$L() != null) for ($T e : v.$L()) if (e != null) check$L(e, r)", JavaTypes.getter(f),
                        elementType(f), JavaTypes.getter(f), typeName(ctx.model.type(f.complexType())));
            }
        }
        for (FieldModel f : t.fields()) {
            if (!topLevel) {
                break; // a struct's required values: check<Type>, once it is known not to be a null element
            }
            if (requiredReference(f) && f.graphReference()) {
                c.addStatement("r.required(v, $L)", slot(t, f)); // checked once references are resolved
            } else if (requiredReference(f)) {
                c.addStatement("if (v.$L() == null) throw $T.malformed($S, $S)", JavaTypes.getter(f), WFE, name(t, f),
                        "required and not nillable, but absent");
            }
        }
        return c.build();
    }

    private static String quote(String s) {
        return "\"" + s + "\"";
    }

    private CodeBlock readCase(ComplexTypeModel owner, FieldModel f) {
        String nm = name(owner, f);
        String set = "v." + JavaTypes.setter(f);
        String get = "v." + JavaTypes.getter(f) + "()";
        CodeBlock.Builder c = CodeBlock.builder();
        if (f.graphReference()) {
            int slot = slot(owner, f);
            if (!f.repeated()) {
                return c.addStatement("$T.expect(tag, 0, $S)", R, nm)
                        .addStatement("int ref = in.readVarint32()")
                        // 0 (null) is applied in order with the references: a later occurrence wins
                        .addStatement("if (ref != 0) r.ref(v, $L, ref)", slot)
                        .addStatement("else r.refNull(v, $L)", slot).build();
            }
            return c.addStatement("$T refs = new $T()", ProtoArrays.Varints.class, ProtoArrays.Varints.class)
                    .addStatement("refs.append(in, tag, r)")
                    .addStatement("for (int i = 0; i < refs.size(); i++) r.ref(v, $L, refs.get(i))", slot).build();
        }
        if (f.complexType() != null) {
            ComplexTypeModel target = ctx.model.type(f.complexType());
            String read = "read" + typeName(target);
            c.addStatement("$T.expect(tag, 2, $S)", R, nm);
            if (!f.repeated()) {
                return c.addStatement("$L($L(in, r, $L$L))", set, read, get, target.heterogeneousList() ? "" : ", false")
                        .build();
            }
            return c.addStatement("$L.add($L(in, r, null$L))", get, read, target.heterogeneousList() ? "" : ", true").build();
        }
        ScalarType s = f.scalar();
        if (f.repeated()) {
            if (s == ScalarType.BYTE) {
                return c.addStatement("$T.expect(tag, 2, $S)", R, nm).addStatement("$L(in.readBytes())", set).build();
            }
            if (packed(f)) {
                return c.addStatement("$L.append(in, tag, r)", acc(f)).build();
            }
            if (s == ScalarType.DATE_TIME) {
                return c.addStatement("$T.expect(tag, 2, $S)", R, nm)
                        .addStatement("int o = in.beginMessage(in.readLength())")
                        .addStatement("$L.add($T.readDateTime(in, $S))", get, R, nm)
                        .addStatement("in.endMessage(o)").build();
            }
            return c.addStatement("$T.expect(tag, 2, $S)", R, nm)
                    .addStatement("$L.add($L)", get, s == ScalarType.STRING ? CodeBlock.of("$T.readString(in, $S)", R, nm)
                            : CodeBlock.of("in.readBytes()")).build();
        }
        return c.addStatement("$T.expect(tag, $L, $S)", R, wireType(s), nm).add(scalarRead(s, set, get, nm)).build();
    }

    private static int wireType(ScalarType s) {
        return switch (s) {
            case FLOAT -> 5;
            case DOUBLE -> 1;
            case STRING, BYTES, DATE_TIME -> 2;
            default -> 0;
        };
    }

    /** A single scalar; a DateTime merges into what an earlier occurrence set ({@code get}), as protobuf merges a message. */
    private static CodeBlock scalarRead(ScalarType s, String set, String get, String nm) {
        return switch (s) {
            case BOOLEAN -> CodeBlock.of("$L(in.readBool());\n", set);
            case BYTE -> CodeBlock.of("$L($T.toByte(in.readVarint32(), $S));\n", set, R, nm);
            case SHORT -> CodeBlock.of("$L($T.toShort(in.readVarint32(), $S));\n", set, R, nm);
            case INT -> CodeBlock.of("$L(in.readVarint32());\n", set);
            case LONG -> CodeBlock.of("$L(in.readVarint64());\n", set);
            case FLOAT -> CodeBlock.of("$L(in.readFloat());\n", set);
            case DOUBLE -> CodeBlock.of("$L(in.readDouble());\n", set);
            case STRING -> CodeBlock.of("$L($T.readString(in, $S));\n", set, R, nm);
            case BYTES -> CodeBlock.of("$L(in.readBytes());\n", set);
            case DATE_TIME -> CodeBlock.builder().addStatement("int o = in.beginMessage(in.readLength())")
                    .addStatement("$L($T.readDateTime(in, $L, $S))", set, R, get, nm).addStatement("in.endMessage(o)").build();
        };
    }

    /** One entry of the node table: a new node, numbered before its fields are read. */
    private CodeBlock readNode(ComplexTypeModel message) {
        List<String> types = nodeTypes(message);
        CodeBlock.Builder c = CodeBlock.builder().addStatement("$T.expect(tag, 2, $S)", R, message.name() + ".sb_nodes");
        if (types.size() == 1) {
            ClassName t = ctx.types.typeClass(types.get(0));
            return c.addStatement("$T node = new $T()", t, t).addStatement("r.addNode(node)")
                    .addStatement("read$L(in, r, node, false)", t.simpleName()).build();
        }
        c.addStatement("int outer = in.beginMessage(in.readLength())").addStatement("Object node = null")
                .beginControlFlow("for (int t = in.readTag(); t != 0; t = in.readTag())")
                .beginControlFlow("switch (t >>> 3)");
        for (int i = 0; i < types.size(); i++) {
            ClassName t = ctx.types.typeClass(types.get(i));
            c.add("case $L -> {\n$>", i + 1)
                    .addStatement("if (node != null) throw $T.malformed($S, $S)", WFE, message.name() + ".sb_nodes",
                            "a node entry with two values")
                    .addStatement("$T.expect(t, 2, $S)", R, message.name() + ".sb_nodes")
                    .addStatement("$T x = new $T()", t, t).addStatement("r.addNode(x)")
                    .addStatement("read$L(in, r, x, false)", t.simpleName()).addStatement("node = x").add("$<}\n");
        }
        return c.addStatement("default -> in.skipField(t)").endControlFlow().endControlFlow()
                .addStatement("in.endMessage(outer)")
                .addStatement("if (node == null) throw $T.malformed($S, $S)", WFE, message.name() + ".sb_nodes",
                        "a node entry with no value").build();
    }

    private List<String> nodeTypes(ComplexTypeModel message) {
        var reachable = ctx.graphTypesReachableFrom(message);
        return ctx.model.types().keySet().stream().filter(reachable::contains).toList();
    }

    // ---- heterogeneous lists

    private MethodSpec listSize(ComplexTypeModel t) {
        ClassName c = ctx.types.typeClass(t.name());
        MethodSpec.Builder m = MethodSpec.methodBuilder("size" + typeName(t)).addModifiers(Modifier.STATIC)
                .returns(long.class).addParameter(c, "v").addParameter(W, "w")
                .addStatement("w.enterList($S)", t.name())
                .addStatement("long n = 0")
                .beginControlFlow("for (Object e : v.getItems())")
                .addStatement("int slot = w.reserve()")
                .addStatement("long el");
        for (int i = 0; i < t.fields().size(); i++) {
            FieldModel a = t.fields().get(i);
            TypeName java = ctx.types.alternativeType(a);
            m.beginControlFlow(i == 0 ? "if (e instanceof $T x)" : "else if (e instanceof $T x)", java);
            if (a.isScalar()) {
                m.addStatement("el = $L", scalarSize(a.scalar(), i + 1, "x", name(t, a)));
            } else {
                m.addStatement("int inner = w.reserve()")
                        .addStatement("el = $T.delimitedSize($L, w.sized(inner, size$L(x, w)))", W, i + 1,
                                typeName(ctx.model.type(a.complexType())));
            }
            m.endControlFlow();
        }
        m.beginControlFlow("else").addStatement("throw $T.malformed($S, e == null ? $S : $S + e.getClass().getName())",
                WFE, t.name(), "a null element", "an element of no alternative: ").endControlFlow();
        return m.addStatement("n += $T.delimitedSize(1, w.sized(slot, el))", W).endControlFlow()
                .addStatement("w.leaveList()").addStatement("return n").build();
    }

    private MethodSpec listWrite(ComplexTypeModel t) {
        ClassName c = ctx.types.typeClass(t.name());
        MethodSpec.Builder m = MethodSpec.methodBuilder("write" + typeName(t)).addModifiers(Modifier.STATIC)
                .addParameter(OUT, "out").addParameter(c, "v").addParameter(W, "w")
                .beginControlFlow("for (Object e : v.getItems())")
                .addStatement("out.writeLengthDelimited(1, w.nextSize())");
        for (int i = 0; i < t.fields().size(); i++) {
            FieldModel a = t.fields().get(i);
            TypeName java = ctx.types.alternativeType(a);
            m.beginControlFlow(i == 0 ? "if (e instanceof $T x)" : "else if (e instanceof $T x)", java);
            if (a.isScalar()) {
                m.addStatement(scalarWrite(a.scalar(), i + 1, "x"));
            } else {
                m.addStatement("out.writeLengthDelimited($L, w.nextSize())", i + 1)
                        .addStatement("write$L(out, x, w)", typeName(ctx.model.type(a.complexType())));
            }
            m.endControlFlow();
        }
        return m.endControlFlow().build();
    }

    private MethodSpec listRead(ComplexTypeModel t) {
        ClassName c = ctx.types.typeClass(t.name());
        MethodSpec.Builder m = MethodSpec.methodBuilder("read" + typeName(t)).addModifiers(Modifier.STATIC)
                .returns(c).addParameter(IN, "in").addParameter(R, "r").addParameter(c, "into")
                .addStatement("int outer = in.beginMessage(in.readLength())")
                .addStatement("r.enterList($S)", t.name())
                .addStatement("$T v = into != null ? into : new $T()", c, c)
                .addStatement("$T<Object> items = new $T<>(v.getItems())", List.class, ArrayList.class)
                .beginControlFlow("for (int tag = in.readTag(); tag != 0; tag = in.readTag())")
                .beginControlFlow("if (tag >>> 3 != 1)").addStatement("in.skipField(tag)").addStatement("continue")
                .endControlFlow()
                .addStatement("$T.expect(tag, 2, $S)", R, t.name() + ".elements")
                .addStatement("int element = in.beginMessage(in.readLength())")
                .addStatement("Object e = null")
                .beginControlFlow("for (int t = in.readTag(); t != 0; t = in.readTag())")
                .beginControlFlow("switch (t >>> 3)");
        for (int i = 0; i < t.fields().size(); i++) {
            FieldModel a = t.fields().get(i);
            String nm = name(t, a);
            m.addCode("case $L -> {\n$>", i + 1);
            if (a.isScalar()) {
                ScalarType s = a.scalar();
                m.addStatement("$T.expect(t, $L, $S)", R, wireType(s), nm);
                m.addStatement("e = $L", switch (s) {
                    case BOOLEAN -> CodeBlock.of("in.readBool()");
                    case BYTE -> CodeBlock.of("$T.toByte(in.readVarint32(), $S)", R, nm);
                    case SHORT -> CodeBlock.of("$T.toShort(in.readVarint32(), $S)", R, nm);
                    case INT -> CodeBlock.of("in.readVarint32()");
                    case LONG -> CodeBlock.of("in.readVarint64()");
                    case FLOAT -> CodeBlock.of("in.readFloat()");
                    case DOUBLE -> CodeBlock.of("in.readDouble()");
                    case STRING -> CodeBlock.of("$T.readString(in, $S)", R, nm);
                    case BYTES -> CodeBlock.of("in.readBytes()");
                    case DATE_TIME -> CodeBlock.of("readDateTimeField(in, e instanceof $T x ? x : null, $S)",
                            java.time.OffsetDateTime.class, nm);
                });
            } else {
                ClassName at = ctx.types.typeClass(a.complexType());
                m.addStatement("$T.expect(t, 2, $S)", R, nm)
                        .addStatement("e = read$L(in, r, e instanceof $T x ? x : null$L)", at.simpleName(), at,
                                ctx.model.type(a.complexType()).heterogeneousList() ? "" : ", false");
            }
            m.addCode("$<}\n");
        }
        return m.addStatement("default -> in.skipField(t)").endControlFlow().endControlFlow()
                .addStatement("in.endMessage(element)")
                .addStatement("if (e == null) throw $T.malformed($S, $S)", WFE, t.name() + ".elements",
                        "an element with no alternative set")
                .addStatement("items.add(e)")
                .endControlFlow()
                .addStatement("r.leaveList()")
                .addStatement("in.endMessage(outer)")
                .addStatement("v.setItems(items)")
                .addStatement("return v").build();
    }

    // ---- operation messages

    /** The top-level fields of a message in number order: its schema fields, the node table, the nulls. */
    private TypeSpec messageWriter(ComplexTypeModel m) {
        ClassName c = ctx.types.typeClass(m.name());
        boolean graph = !ctx.graphTypesReachableFrom(m).isEmpty();
        List<String> kinds = new ArrayList<>();
        List<String> widths = new ArrayList<>();
        for (FieldModel f : m.fields()) {
            kinds.add(packed(f) ? "PACKED" : protoRepeated(f) && !f.graphReference() ? "ELEMENTS" : "SINGLE");
            widths.add(packed(f) ? Integer.toString(width(f)) : "0");
        }
        if (graph) {
            kinds.add("ELEMENTS");
            widths.add("0");
        }
        if (hasNulls(m)) {
            kinds.add("SINGLE");
            widths.add("0");
        }
        MethodSpec.Builder ctor = MethodSpec.constructorBuilder().addParameter(c, "v").addParameter(int.class, "maxNodes")
                .addStatement("super(KINDS, WIDTHS)")   // made once per message type, not per message
                .addStatement("this.v = v")
                .addStatement("this.w = state(new $T(maxNodes))", W)
                .addStatement("long n = 0");
        if (hasNulls(m)) {
            ctor.addStatement("$T nulls = null", ProtoNulls.class);
        }
        if (graph) {
            ctor.addStatement("w.collectNodes(v)");
        }
        for (int i = 0; i < m.fields().size(); i++) {
            ctor.addCode(sizeField(m, m.fields().get(i), i + 1));
        }
        if (graph) {
            // a refusal inside the node table names the node: Type[node i].field
            ctor.addStatement("$T<Object> nodes = w.nodes()", List.class)
                    .beginControlFlow("for (int i = 0; i < nodes.size(); i++)")
                    .beginControlFlow("try").addStatement("n += nodeSize(nodes.get(i), w, wrap(nodes.get(i)))")
                    .nextControlFlow("catch ($T e)", WFE).addStatement("throw e.inNode(i)").endControlFlow()
                    .endControlFlow();
        }
        if (hasNulls(m)) {
            ctor.addStatement("this.nulls = nulls").addStatement("if (nulls != null) n += nulls.fieldSize()");
        }
        ctor.addStatement("sized(n)");

        MethodSpec.Builder count = MethodSpec.methodBuilder("count").addAnnotation(Override.class)
                .addModifiers(Modifier.PROTECTED).returns(int.class).addParameter(int.class, "field")
                .beginControlFlow("switch (field)");
        MethodSpec.Builder write = MethodSpec.methodBuilder("write").addAnnotation(Override.class)
                .addModifiers(Modifier.PROTECTED).addParameter(int.class, "field").addParameter(OUT, "out")
                .addParameter(int.class, "from").addParameter(int.class, "to")
                .beginControlFlow("switch (field)");
        int k = 0;
        for (int i = 0; i < m.fields().size(); i++, k++) {
            FieldModel f = m.fields().get(i);
            String get = "v." + JavaTypes.getter(f) + "()";
            write.addCode("case $L -> {\n$>", k);
            if (packed(f)) {
                count.addStatement("case $L: return $L == null ? 0 : $L.length", k, get, get);
                write.addStatement("out.$L($L, $L, from, to)", packedWriter(f.scalar()), i + 1, get);
            } else if (protoRepeated(f) && !f.graphReference()) {
                count.addStatement("case $L: return $L == null ? 0 : $L.size()", k, get, get);
                if (f.complexType() != null) {
                    write.addCode(typeElements(f, i + 1, get, "from", "to"));
                } else {
                    write.addStatement("writeRange$L(out, $L, $L, from, to)", rangeSuffix(f), i + 1, get);
                }
            } else {
                write.addCode(writeField(m, f, i + 1));
            }
            write.addCode("$<}\n");
        }
        if (graph) {
            count.addStatement("case $L: return w.nodes().size()", k);
            write.addCode("case $L -> {\n$>", k++)
                    .beginControlFlow("for (int i = from; i < to; i++)")
                    .addStatement("Object node = w.nodes().get(i)")
                    .addStatement("writeNode(out, node, w, wrap(node))").endControlFlow().addCode("$<}\n");
        }
        if (hasNulls(m)) {
            write.addCode("case $L -> {\n$>", k).addStatement("if (nulls != null) nulls.write(out)").addCode("$<}\n");
        }
        count.addStatement("default: return 0").endControlFlow();
        write.addStatement("default -> throw new $T()", IllegalStateException.class).endControlFlow();
        TypeSpec.Builder b = TypeSpec.classBuilder(c.simpleName() + "Writer")
                .addModifiers(Modifier.PRIVATE, Modifier.STATIC, Modifier.FINAL)
                .superclass(ProtoPartWriter.class)
                .addField(c, "v", Modifier.PRIVATE, Modifier.FINAL)
                .addField(W, "w", Modifier.PRIVATE, Modifier.FINAL)
                .addField(FieldSpec.builder(int[].class, "KINDS", Modifier.PRIVATE, Modifier.STATIC, Modifier.FINAL)
                        .initializer("{$L}", String.join(", ", kinds)).build())
                .addField(FieldSpec.builder(int[].class, "WIDTHS", Modifier.PRIVATE, Modifier.STATIC, Modifier.FINAL)
                        .initializer("{$L}", String.join(", ", widths)).build());
        if (hasNulls(m)) {
            b.addField(ProtoNulls.class, "nulls", Modifier.PRIVATE, Modifier.FINAL);
        }
        if (graph) {
            b.addMethod(wrap(m));
        }
        return b.addMethod(ctor.build()).addMethod(count.build()).addMethod(write.build()).build();
    }

    /** The oneof field of a node's type in the message's Node wrapper; 0 when the message reaches one linked type. */
    private MethodSpec wrap(ComplexTypeModel m) {
        List<String> types = nodeTypes(m);
        MethodSpec.Builder w = MethodSpec.methodBuilder("wrap").addModifiers(Modifier.PRIVATE, Modifier.STATIC)
                .returns(int.class).addParameter(Object.class, "node");
        if (types.size() > 1) {
            for (int i = 0; i < types.size(); i++) {
                w.addStatement("if (node instanceof $T) return $L", ctx.types.typeClass(types.get(i)), i + 1);
            }
        }
        return w.addStatement("return 0").build();
    }

    /** Elements [from, to) of a List of a struct or list type: nested sizes from the size pass, in order. */
    private CodeBlock typeElements(FieldModel f, int num, String get, String from, String to) {
        return CodeBlock.builder().addStatement("$T l = $L", listOf(f), get)
                .beginControlFlow("for (int i = $L; i < $L; i++)", from, to)
                .addStatement("$T e = l.get(i)", elementType(f))
                .beginControlFlow("if (e == null)").addStatement("out.writeLengthDelimited($L, 0)", num)
                .nextControlFlow("else").addStatement("out.writeLengthDelimited($L, w.nextSize())", num)
                .addStatement("write$L(out, e, w)", typeName(ctx.model.type(f.complexType())))
                .endControlFlow().endControlFlow().build();
    }

    private TypeSpec messageReader(ComplexTypeModel m) {
        ClassName c = ctx.types.typeClass(m.name());
        boolean graph = !ctx.graphTypesReachableFrom(m).isEmpty();
        TypeSpec.Builder b = TypeSpec.classBuilder(c.simpleName() + "Reader")
                .addModifiers(Modifier.PRIVATE, Modifier.STATIC, Modifier.FINAL)
                .superclass(ProtoCodec.Reader.class)
                .addField(R, "r", Modifier.PRIVATE, Modifier.FINAL)
                .addField(FieldSpec.builder(c, "v", Modifier.PRIVATE, Modifier.FINAL).initializer("new $T()", c).build());
        for (FieldModel f : m.fields()) {
            if (packed(f)) {
                ClassName a = accumulatorClass(f.scalar());
                b.addField(FieldSpec.builder(a, acc(f), Modifier.PRIVATE, Modifier.FINAL)
                        .initializer("new $T(true)", a).build());
            }
        }
        if (hasNulls(m)) {
            b.addField(ProtoNulls.class, "nulls", Modifier.PRIVATE);
        }
        b.addMethod(MethodSpec.constructorBuilder().addParameter(MessageLimits.class, "limits")
                .addParameter(long.class, "expectedBytes").addStatement("super(limits)")
                .addStatement("this.r = new $T(limits, expectedBytes)", R).build());
        b.addMethod(MethodSpec.methodBuilder("merge").addAnnotation(Override.class).addModifiers(Modifier.PROTECTED)
                .addParameter(IN, "in")
                .addStatement("$T v = this.v", c)
                .beginControlFlow("try").addCode(readBody(m, true))
                .nextControlFlow("catch ($T e)", WFE).addStatement("throw r.named(e)").endControlFlow().build());
        MethodSpec.Builder complete = MethodSpec.methodBuilder("complete").addAnnotation(Override.class)
                .addModifiers(Modifier.PROTECTED).returns(Object.class)
                .addStatement("$T v = this.v", c)
                .beginControlFlow("try").addCode(finishBody(m, true));
        if (!refSlots.isEmpty() && (graph || m.fields().stream().anyMatch(FieldModel::graphReference))) {
            complete.addStatement("r.resolve(RESOLVER)");
        }
        complete.nextControlFlow("catch ($T e)", WFE).addStatement("throw r.named(e)").endControlFlow()
                .addStatement("return v");
        return b.addMethod(complete.build()).build();
    }

    // ---- linked nodes and references

    private TypeSpec resolver() {
        MethodSpec.Builder set = MethodSpec.methodBuilder("set").addAnnotation(Override.class).addModifiers(Modifier.PUBLIC)
                .addParameter(Object.class, "holder").addParameter(int.class, "slot").addParameter(Object.class, "node")
                .beginControlFlow("switch (slot)");
        MethodSpec.Builder field = MethodSpec.methodBuilder("field").addAnnotation(Override.class).addModifiers(Modifier.PUBLIC)
                .returns(String.class).addParameter(int.class, "slot").beginControlFlow("switch (slot)");
        MethodSpec.Builder isSet = MethodSpec.methodBuilder("isSet").addAnnotation(Override.class).addModifiers(Modifier.PUBLIC)
                .returns(boolean.class).addParameter(Object.class, "holder").addParameter(int.class, "slot")
                .beginControlFlow("switch (slot)");
        int i = 0;
        for (Map.Entry<String, FieldModel> e : refSlots.entrySet()) {
            FieldModel f = e.getValue();
            ClassName owner = ctx.types.typeClass(refOwners.get(e.getKey()).name());
            ClassName target = ctx.types.typeClass(f.complexType());
            set.addCode("case $L -> {\n$>", i);
            if (!f.repeated()) {   // null: a later occurrence of the field said null (refNull)
                set.beginControlFlow("if (node == null)").addStatement("(($T) holder).$L(null)", owner, JavaTypes.setter(f))
                        .addStatement("return").endControlFlow();
            }
            set.addStatement("if (!(node instanceof $T n)) throw $T.malformed($S, $S + node.getClass().getSimpleName())",
                            target, WFE, e.getKey(), "refers to a node of type ");
            if (f.repeated()) {
                set.addStatement("$T l = (($T) holder).$L()", listOf(f), owner, JavaTypes.getter(f))
                        .addStatement("if (l == null) throw $T.malformed($S, $S)", WFE, e.getKey(), "a null list holds references")
                        .addStatement("l.add(n)");
            } else {
                set.addStatement("(($T) holder).$L(n)", owner, JavaTypes.setter(f));
            }
            set.addCode("$<}\n");
            field.addStatement("case $L: return $S", i, e.getKey());
            isSet.addStatement("case $L: return (($T) holder).$L() != null", i, owner, JavaTypes.getter(f));
            i++;
        }
        isSet.addStatement("default: return true").endControlFlow();
        set.addStatement("default -> throw new $T()", IllegalStateException.class).endControlFlow();
        field.addStatement("default: return null").endControlFlow();
        return TypeSpec.classBuilder("Resolver").addModifiers(Modifier.PRIVATE, Modifier.STATIC, Modifier.FINAL)
                .addSuperinterface(ProtoReadState.Resolver.class).addMethod(set.build()).addMethod(field.build())
                .addMethod(isSet.build()).build();
    }

    /** Helpers every codec has: node entries, reference lists, List range writers. */
    List<MethodSpec> helpers() {
        List<MethodSpec> methods = new ArrayList<>(rangeWriters());
        TypeName anyList = ParameterizedTypeName.get(ClassName.get(List.class), com.squareup.javapoet.WildcardTypeName.subtypeOf(Object.class));
        methods.add(MethodSpec.methodBuilder("refsSize").addModifiers(Modifier.PRIVATE, Modifier.STATIC).returns(long.class)
                .addParameter(anyList, "l").addParameter(W, "w").addParameter(String.class, "field")
                .addStatement("long n = 0")
                .beginControlFlow("for (Object e : l)")
                .addStatement("if (e == null) throw $T.malformed(field, $S)", WFE, "a null reference in a list of references")
                .addStatement("n += $T.varint32Size(w.number(e))", OUT)
                .endControlFlow().addStatement("return n").build());
        methods.add(MethodSpec.methodBuilder("writeRefs").addModifiers(Modifier.PRIVATE, Modifier.STATIC)
                .addParameter(OUT, "out").addParameter(int.class, "field").addParameter(anyList, "l").addParameter(W, "w")
                .addStatement("long n = 0")
                .beginControlFlow("for (Object e : l)").addStatement("n += $T.varint32Size(w.number(e))", OUT).endControlFlow()
                .addStatement("out.writeLengthDelimited(field, (int) n)")
                .beginControlFlow("for (Object e : l)").addStatement("out.writeVarint32(w.number(e))").endControlFlow()
                .build());
        methods.add(MethodSpec.methodBuilder("readDateTimeField").addModifiers(Modifier.PRIVATE, Modifier.STATIC)
                .returns(java.time.OffsetDateTime.class).addParameter(IN, "in")
                .addParameter(java.time.OffsetDateTime.class, "previous").addParameter(String.class, "field")
                .addStatement("int o = in.beginMessage(in.readLength())")
                .addStatement("$T v = $T.readDateTime(in, previous, field)", java.time.OffsetDateTime.class, R)
                .addStatement("in.endMessage(o)").addStatement("return v").build());
        List<ComplexTypeModel> nodeTypes = ctx.model.types().values().stream().filter(ComplexTypeModel::recursive).toList();
        if (!nodeTypes.isEmpty()) {
            methods.add(nodeMethod(nodeTypes, true));
            methods.add(nodeMethod(nodeTypes, false));
        }
        return methods;
    }

    /**
     * The size or the write of one node table entry. A message that reaches one linked type holds
     * that type's messages; one that reaches several wraps each in its Node (field i + 1 of the
     * oneof, types in schema order). The wrapping is decided per message, so the codec passes it.
     */
    private MethodSpec nodeMethod(List<ComplexTypeModel> nodeTypes, boolean size) {
        MethodSpec.Builder m = MethodSpec.methodBuilder(size ? "nodeSize" : "writeNode").addModifiers(Modifier.PRIVATE, Modifier.STATIC);
        if (size) {
            m.returns(long.class).addParameter(Object.class, "node").addParameter(W, "w").addParameter(int.class, "wrap");
        } else {
            m.addParameter(OUT, "out").addParameter(Object.class, "node").addParameter(W, "w").addParameter(int.class, "wrap");
        }
        for (ComplexTypeModel t : nodeTypes) {
            ClassName c = ctx.types.typeClass(t.name());
            m.beginControlFlow("if (node instanceof $T n)", c);
            if (size) {
                m.addStatement("int slot = w.reserve()")
                        .addStatement("int inner = w.sized(slot, size$L(n, w))", c.simpleName())
                        .addStatement("return $T.delimitedSize($L, wrap == 0 ? inner : $T.delimitedSize(wrap, inner))", W,
                                NODES, W);
            } else {
                m.addStatement("int inner = w.nextSize()")
                        .beginControlFlow("if (wrap == 0)").addStatement("out.writeLengthDelimited($L, inner)", NODES)
                        .nextControlFlow("else")
                        .addStatement("out.writeLengthDelimited($L, (int) $T.delimitedSize(wrap, inner))", NODES, W)
                        .addStatement("out.writeLengthDelimited(wrap, inner)").endControlFlow()
                        .addStatement("write$L(out, n, w)", c.simpleName()).addStatement("return");
            }
            m.endControlFlow();
        }
        return m.addStatement("throw new $T($S + node.getClass().getName())", IllegalArgumentException.class,
                "not a linked node of " + ctx.model.componentName() + ": ").build();
    }
}
