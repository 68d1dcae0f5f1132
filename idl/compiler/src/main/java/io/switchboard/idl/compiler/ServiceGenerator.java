package io.switchboard.idl.compiler;

import com.squareup.javapoet.ClassName;
import com.squareup.javapoet.CodeBlock;
import com.squareup.javapoet.FieldSpec;
import com.squareup.javapoet.MethodSpec;
import com.squareup.javapoet.ParameterizedTypeName;
import com.squareup.javapoet.TypeName;
import com.squareup.javapoet.TypeSpec;
import io.switchboard.idl.FieldModel;
import io.switchboard.idl.OperationModel;
import io.switchboard.idl.ScalarType;
import io.switchboard.idl.runtime.DeclaredFault;
import io.switchboard.idl.runtime.OperationDescriptor;
import io.switchboard.idl.runtime.ServiceDescriptor;
import io.switchboard.codec.XmlCodec;
import io.switchboard.codec.XmlMessages;
import io.switchboard.codec.message.MessageChecks;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import javax.lang.model.element.Modifier;

/**
 * Generates the Java face of a component: the service interface, the fault exceptions, the
 * server skeleton, the client stub and the {@code XxxComponent} holder with the descriptor.
 */
final class ServiceGenerator {
    /** Protocol SPI types; referenced by name so the compiler does not depend on the SPI module. */
    static final ClassName SKELETON = ClassName.get("io.switchboard.protocol", "Skeleton");
    static final ClassName CHANNEL = ClassName.get("io.switchboard.protocol", "Channel");
    static final ClassName CALL_OPTIONS = ClassName.get("io.switchboard.protocol", "CallOptions");
    static final ClassName REMOTE_INVOCATION = ClassName.get("io.switchboard.protocol", "RemoteInvocationException");
    static final ClassName ASYNC_CALLS = ClassName.get("io.switchboard.protocol", "AsyncCalls");
    /** Server runtime types a component provider uses; by name too, the compiler does not depend on the server. */
    static final ClassName COMPONENT_PROVIDER = ClassName.get("io.switchboard.server", "ComponentProvider");
    static final ClassName COMPONENT_PROVIDERS = ClassName.get("io.switchboard.server", "ComponentProviders");
    static final ClassName COMPONENT_CONTEXT = ClassName.get("io.switchboard.server", "ComponentContext");

    private final CompileContext ctx;
    private final String component;
    private final ClassName iface;
    private final ClassName holder;
    private final ClassName skeleton;
    private final ClassName stub;
    private final ClassName provider;

    ServiceGenerator(CompileContext ctx) {
        this.ctx = ctx;
        this.component = ctx.model.componentName();
        this.iface = ClassName.get(ctx.javaPackage, component);
        this.holder = ClassName.get(ctx.javaPackage, component + "Component");
        this.skeleton = ClassName.get(ctx.javaPackage, component + "Skeleton");
        this.stub = ClassName.get(ctx.javaPackage, component + "Stub");
        this.provider = ClassName.get(ctx.javaPackage, component + "ComponentProvider");
    }

    /** The component provider's class, written only when the configuration names an implementation. */
    ClassName provider() {
        return provider;
    }

    /** Names this generator claims, so the compiler can refuse schema types that collide with them. */
    List<String> generatedNames() {
        // the provider's name is claimed even without an implementation, so adding one later breaks nothing
        List<String> names = new ArrayList<>(List.of(iface.simpleName(), holder.simpleName(), skeleton.simpleName(),
                stub.simpleName(), provider.simpleName(), MessageChecksGenerator.className(ctx).simpleName()));
        for (OperationModel op : ctx.model.operations()) {
            if (op.fault() != null) {
                names.add(faultException(op).simpleName());
            }
        }
        return names;
    }

    ClassName faultException(OperationModel op) {
        return ClassName.get(ctx.javaPackage, JavaTypes.className(op.fault().name()) + "Exception");
    }

    TypeSpec faultExceptionClass(OperationModel op) {
        ClassName info = ctx.types.typeClass(op.fault().name());
        String firstString = op.fault().fields().stream()
                .filter(f -> f.isScalar() && f.scalar() == ScalarType.STRING && !f.repeated())
                .map(JavaTypes::getter).findFirst().orElse(null);
        CodeBlock message = firstString == null
                ? CodeBlock.of("$S", op.fault().name())
                : CodeBlock.of("$S + (faultInfo.$N() == null ? \"\" : \": \" + faultInfo.$N())",
                        op.fault().name(), firstString, firstString);
        return TypeSpec.classBuilder(faultException(op)).addModifiers(Modifier.PUBLIC)
                .superclass(DeclaredFault.class)
                .addJavadoc("The declared fault of {@code $L}; its content is {@link #getFaultInfo()}.\n", op.name())
                .addJavadoc(ctx.generatedNote())
                .addField(FieldSpec.builder(info, "faultInfo", Modifier.PRIVATE, Modifier.FINAL).build())
                .addMethod(MethodSpec.constructorBuilder().addModifiers(Modifier.PUBLIC)
                        .addParameter(info, "faultInfo")
                        .addStatement("super($L)", message)
                        .addStatement("this.faultInfo = $T.requireNonNull(faultInfo, $S)", Objects.class, "faultInfo")
                        .build())
                .addMethod(MethodSpec.methodBuilder("getFaultInfo").addModifiers(Modifier.PUBLIC).returns(info)
                        .addStatement("return faultInfo").build())
                .addMethod(MethodSpec.methodBuilder("faultInfo").addAnnotation(Override.class)
                        .addModifiers(Modifier.PUBLIC).returns(Object.class)
                        .addStatement("return faultInfo").build())
                .build();
    }

    private TypeName returnType(OperationModel op) {
        if (op.oneWay()) {
            return TypeName.VOID;
        }
        List<FieldModel> out = op.response().fields();
        return switch (out.size()) {
            case 0 -> TypeName.VOID;
            case 1 -> ctx.types.fieldType(out.get(0));
            default -> ctx.types.typeClass(op.response().name());
        };
    }

    private MethodSpec.Builder signature(OperationModel op) {
        MethodSpec.Builder m = MethodSpec.methodBuilder(op.name()).addModifiers(Modifier.PUBLIC).returns(returnType(op));
        for (FieldModel f : op.request().fields()) {
            m.addParameter(ctx.types.fieldType(f), f.name());
        }
        if (op.fault() != null) {
            m.addException(faultException(op));
        }
        return m;
    }

    TypeSpec serviceInterface() {
        TypeSpec.Builder b = TypeSpec.interfaceBuilder(iface).addModifiers(Modifier.PUBLIC)
                .addJavadoc("The $L component's operations. Implement it to serve the component; "
                        + "call it through {@link $T#stub}.\n", component, holder)
                .addJavadoc(ctx.generatedNote());
        for (OperationModel op : ctx.model.operations()) {
            MethodSpec.Builder m = signature(op).addModifiers(Modifier.ABSTRACT);
            m.addJavadoc("Operation {@code $L}$L.\n", op.name(),
                    op.oneWay() ? " (one-way)" : op.idempotent() ? " (idempotent)" : "");
            b.addMethod(m.build());
        }
        return b.build();
    }

    TypeSpec skeletonClass() {
        MethodSpec.Builder invoke = MethodSpec.methodBuilder("invoke").addAnnotation(Override.class)
                .addModifiers(Modifier.PUBLIC).returns(Object.class)
                .addParameter(OperationDescriptor.class, "operation")
                .addParameter(Object.class, "request")
                .addException(DeclaredFault.class)
                .beginControlFlow("switch (operation.name())");
        for (OperationModel op : ctx.model.operations()) {
            ClassName in = ctx.types.typeClass(op.request().name());
            invoke.beginControlFlow("case $S:", op.name());
            invoke.addStatement("$T in = ($T) request", in, in);
            List<String> args = new ArrayList<>();
            for (FieldModel f : op.request().fields()) {
                args.add("in." + JavaTypes.getter(f) + "()");
            }
            String call = "impl." + op.name() + "(" + String.join(", ", args) + ")";
            TypeName ret = returnType(op);
            if (op.oneWay()) {
                invoke.addStatement(call).addStatement("return null");
            } else {
                ClassName out = ctx.types.typeClass(op.response().name());
                List<FieldModel> outFields = op.response().fields();
                if (outFields.isEmpty()) {
                    invoke.addStatement(call).addStatement("return new $T()", out);
                } else if (outFields.size() == 1) {
                    invoke.addStatement("$T out = new $T()", out, out)
                            .addStatement("out.$N($L)", JavaTypes.setter(outFields.get(0)), call)
                            .addStatement("return out");
                } else {
                    invoke.addStatement("$T out = $L", ret, call)
                            .addStatement("return $T.requireNonNull(out, $S)", Objects.class,
                                    op.name() + " returned null");
                }
            }
            invoke.endControlFlow();
        }
        invoke.addStatement("default: throw new $T($S + operation.name())", IllegalArgumentException.class,
                component + " has no operation ");
        invoke.endControlFlow();
        return TypeSpec.classBuilder(skeleton).addModifiers(Modifier.PUBLIC, Modifier.FINAL)
                .addSuperinterface(SKELETON)
                .addJavadoc("Server side of $L: decodes nothing itself, only unwraps request messages and "
                        + "calls the implementation.\n", component)
                .addJavadoc(ctx.generatedNote())
                .addField(iface, "impl", Modifier.PRIVATE, Modifier.FINAL)
                .addMethod(MethodSpec.constructorBuilder().addModifiers(Modifier.PUBLIC).addParameter(iface, "impl")
                        .addStatement("this.impl = $T.requireNonNull(impl, $S)", Objects.class, "impl").build())
                .addMethod(MethodSpec.methodBuilder("descriptor").addAnnotation(Override.class)
                        .addModifiers(Modifier.PUBLIC).returns(ServiceDescriptor.class)
                        .addStatement("return $T.DESCRIPTOR", holder).build())
                .addMethod(invoke.build())
                .build();
    }

    TypeSpec stubClass() {
        TypeSpec.Builder b = TypeSpec.classBuilder(stub).addModifiers(Modifier.PUBLIC, Modifier.FINAL)
                .addSuperinterface(iface)
                .addJavadoc("Client side of $L: wraps arguments into request messages and sends them through a "
                        + "{@link $T}, which picks the protocol of each call.\n", component, CHANNEL)
                .addJavadoc(ctx.generatedNote());
        for (OperationModel op : ctx.model.operations()) {
            b.addField(FieldSpec.builder(OperationDescriptor.class, constant(op),
                    Modifier.PRIVATE, Modifier.STATIC, Modifier.FINAL)
                    .initializer("$T.DESCRIPTOR.operation($S)", holder, op.name()).build());
        }
        b.addField(CHANNEL, "channel", Modifier.PRIVATE, Modifier.FINAL);
        b.addField(CALL_OPTIONS, "options", Modifier.PRIVATE, Modifier.FINAL);
        b.addMethod(MethodSpec.constructorBuilder().addModifiers(Modifier.PUBLIC).addParameter(CHANNEL, "channel")
                .addStatement("this(channel, $T.DEFAULT)", CALL_OPTIONS).build());
        b.addMethod(MethodSpec.constructorBuilder().addModifiers(Modifier.PUBLIC)
                .addParameter(CHANNEL, "channel").addParameter(CALL_OPTIONS, "options")
                .addStatement("this.channel = $T.requireNonNull(channel, $S)", Objects.class, "channel")
                .addStatement("this.options = $T.requireNonNull(options, $S)", Objects.class, "options").build());
        b.addMethod(MethodSpec.methodBuilder("withOptions").addModifiers(Modifier.PUBLIC).returns(stub)
                .addJavadoc("A stub on the same channel whose calls carry {@code newOptions}.\n")
                .addParameter(CALL_OPTIONS, "newOptions")
                .addStatement("return new $T(channel, newOptions)", stub).build());
        b.addMethod(MethodSpec.methodBuilder("options").addModifiers(Modifier.PUBLIC).returns(CALL_OPTIONS)
                .addStatement("return options").build());

        for (OperationModel op : ctx.model.operations()) {
            MethodSpec.Builder m = signature(op).addAnnotation(Override.class);
            java.util.Set<String> params = new java.util.HashSet<>();
            op.request().fields().forEach(f -> params.add(f.name()));
            String request = unique("request", params);
            String response = unique("response", params);
            String declared = unique("declared", params);
            String other = unique("other", params);
            ClassName in = ctx.types.typeClass(op.request().name());
            m.addStatement("$T $N = new $T()", in, request, in);
            for (FieldModel f : op.request().fields()) {
                m.addStatement("$N.$N($N)", request, JavaTypes.setter(f), f.name());
            }
            m.addStatement("$T $N", Object.class, response);
            m.beginControlFlow("try")
                    .addStatement("$N = this.channel.call($N, $N, this.options)", response, constant(op), request);
            if (op.fault() != null) {
                m.nextControlFlow("catch ($T $N)", faultException(op), declared).addStatement("throw $N", declared);
            }
            m.nextControlFlow("catch ($T $N)", DeclaredFault.class, other)
                    .addStatement("throw new $T($S + $N.getMessage(), $N.getClass().getName(), $N)",
                            REMOTE_INVOCATION, op.name() + " raised a fault it does not declare: ", other, other, other)
                    .endControlFlow();
            TypeName ret = returnType(op);
            if (!op.oneWay()) {
                ClassName out = ctx.types.typeClass(op.response().name());
                List<FieldModel> outFields = op.response().fields();
                if (outFields.size() == 1) {
                    m.addStatement("return (($T) $N).$N()", out, response, JavaTypes.getter(outFields.get(0)));
                } else if (outFields.size() > 1) {
                    m.addStatement("return ($T) $N", ret, response);
                }
            }
            b.addMethod(m.build());
            b.addMethod(asyncMethod(op, request, response));
        }
        return b.build();
    }

    /**
     * {@code opAsync(...)}: the same call without waiting, through {@code Channel.callAsync};
     * cancelling the future cancels the call.
     */
    private MethodSpec asyncMethod(OperationModel op, String request, String response) {
        TypeName ret = returnType(op);
        TypeName boxed = ret == TypeName.VOID ? ClassName.get(Void.class) : ret.box();
        MethodSpec.Builder m = MethodSpec.methodBuilder(op.name() + "Async").addModifiers(Modifier.PUBLIC)
                .returns(ParameterizedTypeName.get(ClassName.get(CompletableFuture.class), boxed))
                .addJavadoc("Operation {@code $L} without waiting: the future completes with what {@link #$L} returns, "
                        + "or with what it throws; cancelling it cancels the call.\n", op.name(), op.name());
        for (FieldModel f : op.request().fields()) {
            m.addParameter(ctx.types.fieldType(f), f.name());
        }
        ClassName in = ctx.types.typeClass(op.request().name());
        m.addStatement("$T $N = new $T()", in, request, in);
        for (FieldModel f : op.request().fields()) {
            m.addStatement("$N.$N($N)", request, JavaTypes.setter(f), f.name());
        }
        CodeBlock unwrap;
        List<FieldModel> outFields = op.oneWay() ? List.of() : op.response().fields();
        if (outFields.size() == 1) {
            unwrap = CodeBlock.of("$N -> (($T) $N).$N()", response, ctx.types.typeClass(op.response().name()),
                    response, JavaTypes.getter(outFields.get(0)));
        } else if (outFields.size() > 1) {
            unwrap = CodeBlock.of("$N -> ($T) $N", response, ret, response);
        } else {
            unwrap = CodeBlock.of("$N -> ($T) null", response, Void.class);
        }
        m.addStatement("return $T.map(this.channel.callAsync($N, $N, this.options), $N, $L)", ASYNC_CALLS,
                constant(op), request, constant(op), unwrap);
        return m.build();
    }

    TypeSpec holderClass(String schemaResource, String wsdlResource, String protoResource, ClassName checks,
                         ClassName protoCodec) {
        CodeBlock.Builder ops = CodeBlock.builder();
        for (OperationModel op : ctx.model.operations()) {
            CodeBlock.Builder one = CodeBlock.builder().add("\nnew $T($S)", OperationDescriptor.Builder.class, op.name())
                    .add(".request($T.class)", ctx.types.typeClass(op.request().name()));
            if (!op.oneWay()) {
                one.add(".response($T.class)", ctx.types.typeClass(op.response().name()));
            }
            if (op.fault() != null) {
                one.add(".fault($T.class, $T::new)", ctx.types.typeClass(op.fault().name()), faultException(op));
            }
            ops.add(ops.isEmpty() ? "$L" : ",$L", one.build());
        }
        return TypeSpec.classBuilder(holder).addModifiers(Modifier.PUBLIC, Modifier.FINAL)
                .addJavadoc("Entry point of the generated $L component: its descriptor, a skeleton for an "
                        + "implementation, a stub over a channel.\n\n<pre>{@code\n"
                        + "Skeleton server = $LComponent.skeleton(new My$L());\n"
                        + "$L client = $LComponent.stub(channel);\n}</pre>\n",
                        component, component, component, component, component)
                .addJavadoc(ctx.generatedNote())
                .addField(FieldSpec.builder(ServiceDescriptor.class, "DESCRIPTOR",
                        Modifier.PUBLIC, Modifier.STATIC, Modifier.FINAL)
                        .initializer("$T.builder($S, $S, $T.class)\n"
                                        + ".document($T.SCHEMA, $S).document($T.WSDL, $S).document($T.PROTO, $S)\n"
                                        + ".codec($T.class, new $T())\n.codec($T.class, new $T())\n"
                                        + ".codec($T.Factory.class, $T.factory())\n"
                                        + ".operations($L).build()",
                                ServiceDescriptor.class, component, ctx.model.targetNamespace(), holder,
                                ServiceDescriptor.class, schemaResource, ServiceDescriptor.class, wsdlResource,
                                ServiceDescriptor.class, protoResource, MessageChecks.class, checks,
                                io.switchboard.codec.proto.ProtoCodec.class, protoCodec, XmlCodec.class, XmlMessages.class, ops.build())
                        .build())
                .addMethod(MethodSpec.constructorBuilder().addModifiers(Modifier.PRIVATE).build())
                .addMethod(MethodSpec.methodBuilder("skeleton").addModifiers(Modifier.PUBLIC, Modifier.STATIC)
                        .returns(SKELETON).addParameter(iface, "impl")
                        .addStatement("return new $T(impl)", skeleton).build())
                .addMethod(MethodSpec.methodBuilder("stub").addModifiers(Modifier.PUBLIC, Modifier.STATIC)
                        .returns(stub).addParameter(CHANNEL, "channel")
                        .addStatement("return new $T(channel)", stub).build())
                .build();
    }

    /**
     * {@code XxxComponentProvider}: lets a server find the component on the class path and make it
     * from {@code implementation}, whose constructor is picked by reflection once per serving. The
     * call {@code XxxComponent.skeleton(...)} makes javac check that the class implements the interface.
     */
    TypeSpec providerClass(ClassName implementation) {
        return TypeSpec.classBuilder(provider).addModifiers(Modifier.PUBLIC, Modifier.FINAL)
                .addSuperinterface(COMPONENT_PROVIDER)
                .addJavadoc("Lets a server find the $L component on the class path and serve {@link $T}\n"
                        + "(listed in {@code META-INF/services/$L}):\n\n<pre>{@code\n"
                        + "./switchboard serve $L --classpath my-component.jar --registry URL\n}</pre>\n"
                        + "<p>The implementation is made by its public constructor taking a {@link $T}, or else\n"
                        + "its public no-argument one.\n",
                        component, implementation, COMPONENT_PROVIDER.canonicalName(), component, COMPONENT_CONTEXT)
                .addJavadoc(ctx.generatedNote())
                .addMethod(MethodSpec.methodBuilder("name").addAnnotation(Override.class).addModifiers(Modifier.PUBLIC)
                        .returns(String.class).addStatement("return $S", component).build())
                .addMethod(MethodSpec.methodBuilder("create").addAnnotation(Override.class)
                        .addModifiers(Modifier.PUBLIC).returns(SKELETON)
                        .addParameter(COMPONENT_CONTEXT, "context")
                        .addStatement("return $T.skeleton($T.instantiate($T.class, context))", holder,
                                COMPONENT_PROVIDERS, implementation)
                        .build())
                .build();
    }

    /** A local variable name that no parameter of the method shadows. */
    private static String unique(String base, java.util.Set<String> taken) {
        String name = base;
        while (taken.contains(name)) {
            name = name + "_";
        }
        return name;
    }

    private static String constant(OperationModel op) {
        return op.name().replaceAll("([a-z0-9])([A-Z])", "$1_$2").toUpperCase(java.util.Locale.ROOT);
    }
}
