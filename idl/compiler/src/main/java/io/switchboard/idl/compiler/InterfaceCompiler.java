package io.switchboard.idl.compiler;

import com.squareup.javapoet.ClassName;
import com.squareup.javapoet.JavaFile;
import com.squareup.javapoet.TypeSpec;
import io.switchboard.idl.ComplexTypeModel;
import io.switchboard.idl.InterfaceModel;
import io.switchboard.idl.OperationModel;
import io.switchboard.idl.SchemaException;
import io.switchboard.idl.SchemaReader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Compiles one interface schema into Java sources and resources:
 * <ul>
 *   <li>a JAXB bean per complex type and per operation message ({@code op}, {@code opResponse},
 *       {@code opFault}) and an exception per declared fault;</li>
 *   <li>the service interface ({@code Echo}), the skeleton ({@code EchoSkeleton}), the client stub
 *       ({@code EchoStub}) and the holder with the descriptor ({@code EchoComponent});</li>
 *   <li>the packed binary codec ({@code EchoBinaryCodec}) and the protobuf codec of the gRPC wire
 *       ({@code EchoProtoCodec}), plain getter and setter calls in schema order;</li>
 *   <li>resources beside them: the schema itself, the WSDL ({@code Echo.wsdl}) and the gRPC
 *       contract, the typed protobuf form of the interface ({@code Echo.proto}, see
 *       {@link #protoName});</li>
 *   <li>given the implementation class, a component provider ({@code EchoComponentProvider}) and its
 *       line in {@code META-INF/services/io.switchboard.server.ComponentProvider} under the resource
 *       directory, so that a server finds the component on the class path.</li>
 * </ul>
 *
 * <pre>{@code
 * new InterfaceCompiler().compile(Path.of("src/main/xsd/echo.xsd"), "io.example.echo",
 *         Path.of("target/generated-sources/switchboard"), Path.of("target/generated-resources/switchboard"),
 *         "io.example.echo.EchoService");
 * }</pre>
 */
public final class InterfaceCompiler {

    /** Where a server finds component providers, relative to the resource directory. */
    public static final String PROVIDER_SERVICES = "META-INF/services/io.switchboard.server.ComponentProvider";

    /**
     * What one compilation wrote.
     *
     * @param provider the component provider's class name, or null when no implementation was given
     */
    public record Result(InterfaceModel model, List<Path> sources, List<Path> resources, String provider) {
    }

    /** Compiles without a component provider: for interfaces a module only calls, or serves by hand. */
    public Result compile(Path schema, String javaPackage, Path sourceDir, Path resourceDir) {
        return compile(schema, javaPackage, sourceDir, resourceDir, null);
    }

    /**
     * Compiles, and with {@code implementation} (a class name, qualified or in {@code javaPackage})
     * also writes the component provider and its service line; without it, removes a provider that an
     * earlier compilation into the same directories wrote, so a stale one is never served.
     */
    public Result compile(Path schema, String javaPackage, Path sourceDir, Path resourceDir, String implementation) {
        Objects.requireNonNull(javaPackage, "javaPackage");
        if (!javaPackage.matches(QUALIFIED_NAME)) {
            throw new SchemaException("'" + javaPackage + "' is not a Java package name");
        }
        ClassName implementationClass = implementation == null ? null : implementationClass(implementation, javaPackage);
        InterfaceModel model = SchemaReader.read(schema);
        String schemaFile = schema.getFileName().toString();
        CompileContext ctx = new CompileContext(model, javaPackage, schemaFile);
        ServiceGenerator service = new ServiceGenerator(ctx);
        checkNames(model, service);
        String protoText = new ProtoWriter(ctx).write(); // refuses names the typed .proto needs before anything is written

        List<TypeSpec> specs = new ArrayList<>();
        BeanGenerator beans = new BeanGenerator(ctx);
        for (ComplexTypeModel t : model.types().values()) {
            specs.add(beans.generate(t));
        }
        for (OperationModel op : model.operations()) {
            specs.add(beans.generate(op.request()));
            if (op.response() != null) {
                specs.add(beans.generate(op.response()));
            }
            if (op.fault() != null) {
                specs.add(beans.generate(op.fault()));
                specs.add(service.faultExceptionClass(op));
            }
        }
        String wsdlName = model.componentName() + ".wsdl";
        String protoName = model.componentName() + ".proto";
        specs.add(service.serviceInterface());
        specs.add(service.skeletonClass());
        specs.add(service.stubClass());
        specs.add(new CodecGenerator(ctx).generate());
        specs.add(new ProtoCodecGenerator(ctx).generate());
        specs.add(service.holderClass(schemaFile, wsdlName, protoName, CodecGenerator.className(ctx),
                ProtoCodecGenerator.className(ctx)));
        if (implementationClass != null) {
            specs.add(service.providerClass(implementationClass));
        }

        try {
            List<Path> sources = new ArrayList<>();
            for (TypeSpec spec : specs) {
                JavaFile file = JavaFile.builder(javaPackage, spec).skipJavaLangImports(true).indent("    ")
                        .addFileComment("Generated by the Switchboard interface compiler from $L. Do not edit.", schemaFile)
                        .build();
                file.writeTo(sourceDir);
                sources.add(sourceDir.resolve(javaPackage.replace('.', '/')).resolve(spec.name + ".java"));
            }
            sources.add(writePackageInfo(model, javaPackage, sourceDir, schemaFile));

            Path resDir = resourceDir.resolve(javaPackage.replace('.', '/'));
            Files.createDirectories(resDir);
            Path schemaCopy = resDir.resolve(schemaFile);
            Files.writeString(schemaCopy, model.schemaText(), StandardCharsets.UTF_8);
            Path wsdl = resDir.resolve(wsdlName);
            Files.writeString(wsdl, new WsdlWriter(ctx).write(), StandardCharsets.UTF_8);
            Path proto = resDir.resolve(protoName);
            Files.writeString(proto, protoText, StandardCharsets.UTF_8);
            Files.deleteIfExists(resDir.resolve(model.componentName() + ".typed.proto")); // the name older versions wrote
            String provider = service.provider().canonicalName();
            List<Path> resources = new ArrayList<>(List.of(schemaCopy, wsdl, proto));
            if (implementationClass != null) {
                resources.add(updateProviderServices(resourceDir, provider, true));
            } else {
                Files.deleteIfExists(sourceDir.resolve(provider.replace('.', '/') + ".java"));
                updateProviderServices(resourceDir, provider, false);
            }
            return new Result(model, sources, resources, implementationClass == null ? null : provider);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write generated files: " + e.getMessage(), e);
        }
    }

    /** The resource name of the component's typed {@code .proto} (every value as ordinary protobuf), the gRPC contract. */
    public static String protoName(String componentName) {
        return componentName + ".proto";
    }

    private static final String QUALIFIED_NAME = "[a-zA-Z_][\\w]*(\\.[a-zA-Z_][\\w]*)*";

    private static ClassName implementationClass(String implementation, String javaPackage) {
        String name = implementation.strip();
        if (!name.matches(QUALIFIED_NAME) || !javax.lang.model.SourceVersion.isName(name)) {
            throw new SchemaException("implementation '" + implementation + "' is not a Java class name");
        }
        int dot = name.lastIndexOf('.');
        return dot < 0 ? ClassName.get(javaPackage, name) : ClassName.get(name.substring(0, dot), name.substring(dot + 1));
    }

    /**
     * Adds or removes one provider's line in the services file, keeping the others: several schemas
     * of one module share the file. The file goes when its last line does.
     */
    private static Path updateProviderServices(Path resourceDir, String provider, boolean present) throws IOException {
        Path file = resourceDir.resolve(PROVIDER_SERVICES);
        java.util.TreeSet<String> lines = new java.util.TreeSet<>();
        if (Files.exists(file)) {
            for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
                if (!line.isBlank()) {
                    lines.add(line.strip());
                }
            }
        }
        boolean changed = present ? lines.add(provider) : lines.remove(provider);
        if (lines.isEmpty()) {
            Files.deleteIfExists(file);
        } else if (changed) {
            Files.createDirectories(file.getParent());
            Files.writeString(file, String.join("\n", lines) + "\n", StandardCharsets.UTF_8);
        }
        return file;
    }

    /** The package's namespace and qualified element form, as JAXB reads them from package-info. */
    private static Path writePackageInfo(InterfaceModel model, String javaPackage, Path sourceDir, String schemaFile)
            throws IOException {
        Path dir = sourceDir.resolve(javaPackage.replace('.', '/'));
        Files.createDirectories(dir);
        Path file = dir.resolve("package-info.java");
        String ns = model.targetNamespace().replace("\\", "\\\\").replace("\"", "\\\"");
        String text = "// Generated by the Switchboard interface compiler from " + schemaFile + ". Do not edit.\n"
                + "/** Component " + model.componentName() + ", namespace {@code " + model.targetNamespace().replace("*/", "")
                + "}. */\n"
                + "@jakarta.xml.bind.annotation.XmlSchema(namespace = \"" + ns + "\",\n"
                + "        elementFormDefault = jakarta.xml.bind.annotation.XmlNsForm.QUALIFIED)\n"
                + "package " + javaPackage + ";\n";
        Files.writeString(file, text, StandardCharsets.UTF_8);
        return file;
    }

    private static void checkNames(InterfaceModel model, ServiceGenerator service) {
        Map<String, String> owners = new HashMap<>();
        for (String generated : service.generatedNames()) {
            owners.put(generated, "a generated class");
        }
        List<String> beans = new ArrayList<>(model.types().keySet());
        for (OperationModel op : model.operations()) {
            beans.add(op.request().name());
            if (op.response() != null) {
                beans.add(op.response().name());
            }
            if (op.fault() != null) {
                beans.add(op.fault().name());
            }
        }
        for (String b : beans) {
            String javaName = JavaTypes.className(b);
            String previous = owners.putIfAbsent(javaName, "schema name '" + b + "'");
            if (previous != null) {
                throw new SchemaException("schema name '" + b + "' becomes Java class " + javaName
                        + ", which " + previous + " already uses; rename it");
            }
        }
        for (ComplexTypeModel t : model.types().values()) {
            if (t.recursive() && t.field("switchboardId").isPresent()) {
                throw new SchemaException("type " + t.name() + ": the name switchboardId is reserved");
            }
        }
        java.util.Set<String> operationNames = new java.util.HashSet<>();
        model.operations().forEach(op -> operationNames.add(op.name()));
        for (OperationModel op : model.operations()) {
            if (operationNames.contains(op.name() + "Async")) {
                throw new SchemaException("operation " + op.name() + "Async has the name of " + op.name()
                        + "'s non-blocking form in the stub; rename it");
            }
            for (ComplexTypeModel m : new ComplexTypeModel[] {op.request(), op.response(), op.fault()}) {
                if (m != null && m.field("switchboardGraph").isPresent()) {
                    throw new SchemaException("element " + m.name() + ": the name switchboardGraph is reserved");
                }
            }
        }
    }
}
