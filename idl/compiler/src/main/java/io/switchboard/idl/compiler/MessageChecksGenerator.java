package io.switchboard.idl.compiler;

import com.squareup.javapoet.ClassName;
import com.squareup.javapoet.MethodSpec;
import com.squareup.javapoet.TypeName;
import com.squareup.javapoet.TypeSpec;
import io.switchboard.codec.message.MessageChecks;
import io.switchboard.codec.message.SendChecks;
import io.switchboard.idl.ComplexTypeModel;
import io.switchboard.idl.FieldModel;
import io.switchboard.idl.ScalarType;
import java.util.List;
import javax.lang.model.element.Modifier;

/**
 * Generates {@code XxxMessageChecks}: the walk of a component's beans that every protocol runs
 * before it sends one ({@link MessageChecks}), as plain getter calls, one method per type, in
 * schema order. It reads only what a check needs (strings, date-times, required references, lists
 * of references, heterogeneous lists, n-d arrays, the node table): primitive fields and arrays are
 * not read at all.
 */
final class MessageChecksGenerator {
    private static final ClassName CHECKS = ClassName.get(SendChecks.class);

    private final CompileContext ctx;

    MessageChecksGenerator(CompileContext ctx) {
        this.ctx = ctx;
    }

    static ClassName className(CompileContext ctx) {
        return ClassName.get(ctx.javaPackage, ctx.model.componentName() + "MessageChecks");
    }

    TypeSpec generate() {
        TypeSpec.Builder b = TypeSpec.classBuilder(className(ctx)).addModifiers(Modifier.PUBLIC, Modifier.FINAL)
                .superclass(MessageChecks.class)
                .addJavadoc("The checks every protocol makes before it sends a message of $L (see {@link $T}):\n"
                        + "what no protocol may carry is refused here, naming the field. Used through\n"
                        + "{@code MessageChecks.of($LComponent.DESCRIPTOR)}.\n",
                        ctx.model.componentName(), MessageChecks.class, ctx.model.componentName())
                .addJavadoc(ctx.generatedNote());

        MethodSpec.Builder message = MethodSpec.methodBuilder("checkMessage").addAnnotation(Override.class)
                .addModifiers(Modifier.PROTECTED).addParameter(CHECKS, "c").addParameter(Object.class, "message");
        List<MethodSpec> messageChecks = new java.util.ArrayList<>();
        for (ComplexTypeModel m : ctx.messages()) {
            ClassName t = ctx.types.typeClass(m.name());
            boolean graph = !ctx.graphTypesReachableFrom(m).isEmpty();
            MethodSpec fields = fields(m, false);
            message.beginControlFlow(graph || !fields.code.isEmpty() ? "if (message instanceof $T m)" : "if (message instanceof $T)", t);
            if (graph) {
                message.addStatement("c.nodes(m)");
            }
            if (!fields.code.isEmpty()) {   // a message of numbers alone has nothing to check
                message.addStatement("check$L(c, m)", t.simpleName());
                messageChecks.add(fields);
            }
            message.addStatement("return").endControlFlow();
        }
        message.addStatement("throw new $T($S + (message == null ? null : message.getClass().getName()))",
                IllegalArgumentException.class, "not a message of " + ctx.model.componentName() + ": ");
        b.addMethod(message.build());

        List<ComplexTypeModel> nodeTypes = ctx.model.types().values().stream().filter(ComplexTypeModel::recursive).toList();
        if (!nodeTypes.isEmpty()) {
            MethodSpec.Builder node = MethodSpec.methodBuilder("checkNode").addAnnotation(Override.class)
                    .addModifiers(Modifier.PROTECTED).addParameter(CHECKS, "c").addParameter(Object.class, "node");
            for (ComplexTypeModel n : nodeTypes) {
                ClassName t = ctx.types.typeClass(n.name());
                node.beginControlFlow("if (node instanceof $T n)", t)
                        .addStatement("check$L(c, n)", t.simpleName()).addStatement("return").endControlFlow();
            }
            node.addStatement("throw new $T($S + node.getClass().getName())", IllegalArgumentException.class,
                    "not a linked node of " + ctx.model.componentName() + ": ");
            b.addMethod(node.build());
        }
        b.addMethods(messageChecks);
        for (ComplexTypeModel t : ctx.model.types().values()) {
            b.addMethod(t.heterogeneousList() ? choices(t) : fields(t, !t.recursive()));
        }
        return b.build();
    }

    /** The fields of a message, a linked node (from the node table) or a struct (null passes). */
    private MethodSpec fields(ComplexTypeModel type, boolean struct) {
        ClassName t = ctx.types.typeClass(type.name());
        MethodSpec.Builder m = MethodSpec.methodBuilder("check" + t.simpleName())
                .addModifiers(Modifier.PRIVATE, Modifier.STATIC).addParameter(CHECKS, "c").addParameter(t, "v");
        if (struct) {
            m.beginControlFlow("if (v == null)").addStatement("return").endControlFlow();
            if (type.ndArray()) {
                m.addStatement("c.ndArray(v, $S)", type.name());
            }
        }
        for (FieldModel f : type.fields()) {
            field(m, type, f);
        }
        return m.build();
    }

    /** A heterogeneous list: each element an alternative's value; null, foreign classes and deep nesting refused. */
    private MethodSpec choices(ComplexTypeModel type) {
        ClassName t = ctx.types.typeClass(type.name());
        MethodSpec.Builder m = MethodSpec.methodBuilder("check" + t.simpleName())
                .addModifiers(Modifier.PRIVATE, Modifier.STATIC).addParameter(CHECKS, "c").addParameter(t, "v")
                .beginControlFlow("if (!c.enterList(v))").addStatement("return").endControlFlow()
                .beginControlFlow("for (Object e : v.getItems())");
        for (int i = 0; i < type.fields().size(); i++) {
            FieldModel alternative = type.fields().get(i);
            TypeName java = ctx.types.alternativeType(alternative);
            // a number, boolean or byte array needs no check: the branch only says the element is allowed
            boolean checked = !alternative.isScalar() || alternative.scalar() == ScalarType.STRING
                    || alternative.scalar() == ScalarType.DATE_TIME;
            String test = "e instanceof $T" + (checked ? " x" : "");
            if (i == 0) {
                m.beginControlFlow("if (" + test + ")", java);
            } else {
                m.nextControlFlow("else if (" + test + ")", java);
            }
            String name = type.name() + "." + alternative.name();
            if (alternative.isScalar() && alternative.scalar() == ScalarType.STRING) {
                m.addStatement("$T.string(x, $S)", CHECKS, name);
            } else if (alternative.isScalar() && alternative.scalar() == ScalarType.DATE_TIME) {
                m.addStatement("$T.dateTime(x, $S)", CHECKS, name);
            } else if (!alternative.isScalar()) {
                m.addStatement("check$L(c, x)", ctx.types.typeClass(alternative.complexType()).simpleName());
            }
        }
        return m.nextControlFlow("else").addStatement("throw c.notAnAlternative(e, v)")
                .endControlFlow().endControlFlow().addStatement("c.leaveList()").build();
    }

    /**
     * A required field that is not nillable and has a reference type: null is refused, as the
     * readers of every protocol refuse it missing.
     */
    private static boolean requiredReference(FieldModel f) {
        return !f.optional() && !f.repeated() && !f.nillable() && !(f.isScalar() && f.scalar().isPrimitive());
    }

    private void field(MethodSpec.Builder m, ComplexTypeModel owner, FieldModel f) {
        String name = owner.name() + "." + f.name();
        String get = "v." + JavaTypes.getter(f) + "()";
        if (requiredReference(f)) {
            m.addStatement("c.required($L, $S)", get, name);
        }
        if (f.graphReference()) {
            if (f.repeated()) {
                m.addStatement("c.refs($L, $S)", get, name);   // the nodes themselves are checked from the node table
            }
        } else if (f.complexType() != null) {
            String method = "check" + ctx.types.typeClass(f.complexType()).simpleName();
            if (f.repeated()) {
                m.beginControlFlow("if ($L != null)", get)
                        .addStatement("$L.forEach(x -> $L(c, x))", get, method).endControlFlow();
            } else {
                m.addStatement("$L(c, $L)", method, get);
            }
        } else if (f.scalar() == ScalarType.STRING) {
            m.addStatement(f.repeated() ? "c.strings($L, $S)" : "$T.string($L, $S)",
                    f.repeated() ? new Object[] {get, name} : new Object[] {CHECKS, get, name});
        } else if (f.scalar() == ScalarType.DATE_TIME) {
            m.addStatement(f.repeated() ? "c.dateTimes($L, $S)" : "$T.dateTime($L, $S)",
                    f.repeated() ? new Object[] {get, name} : new Object[] {CHECKS, get, name});
        }
    }
}
