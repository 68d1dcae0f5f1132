package io.switchboard.roundtrip;

import io.switchboard.idl.compiler.InterfaceCompiler;
import io.switchboard.idl.runtime.ServiceDescriptor;
import java.io.File;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import javax.tools.JavaCompiler;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;

/**
 * Generated code for schemas made at test time: the interface compiler writes the sources, javac
 * (in this JVM, through javax.tools) compiles all schemas in one run, and a class loader over the
 * classes and resources hands out each component's descriptor, stub and beans. One javac run for
 * the whole batch costs about what one schema would; that is why schemas are made in a batch.
 */
final class CompiledInterfaces implements AutoCloseable {
    private final URLClassLoader loader;

    private CompiledInterfaces(URLClassLoader loader) {
        this.loader = loader;
    }

    static CompiledInterfaces compile(List<RandomSchemas.Schema> schemas, Path dir) throws IOException {
        Path sources = dir.resolve("sources");
        Path resources = dir.resolve("resources");
        Path classes = dir.resolve("classes");
        Files.createDirectories(classes);
        List<File> files = new ArrayList<>();
        for (RandomSchemas.Schema s : schemas) {
            Path xsd = dir.resolve(s.component().toLowerCase() + ".xsd");
            Files.writeString(xsd, s.xsd(), StandardCharsets.UTF_8);
            InterfaceCompiler.Result result = new InterfaceCompiler().compile(xsd, s.javaPackage(), sources, resources);
            result.sources().forEach(p -> files.add(p.toFile()));
        }
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        StringWriter errors = new StringWriter();
        try (StandardJavaFileManager fm = javac.getStandardFileManager(null, null, StandardCharsets.UTF_8)) {
            // Surefire runs tests from a manifest-only jar: the real class path is in its own property
            String classPath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
            boolean ok = javac.getTask(errors, fm, null, List.of("-classpath", classPath, "-d", classes.toString(),
                    "-proc:none", "-nowarn", "-g:none"), null, fm.getJavaFileObjectsFromFiles(files)).call();
            if (!ok) {
                throw new IllegalStateException("generated code does not compile:\n" + errors);
            }
        }
        URLClassLoader loader = new URLClassLoader(new URL[] {classes.toUri().toURL(), resources.toUri().toURL()},
                CompiledInterfaces.class.getClassLoader());
        return new CompiledInterfaces(loader);
    }

    /** The generated {@code XxxComponent.DESCRIPTOR} of a schema. */
    ServiceDescriptor descriptor(RandomSchemas.Schema schema) {
        try {
            return (ServiceDescriptor) holder(schema).getField("DESCRIPTOR").get(null);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }

    /** A generated stub over {@code channel}: {@code XxxComponent.stub(channel)}. */
    Object stub(RandomSchemas.Schema schema, io.switchboard.protocol.Channel channel) {
        try {
            return holder(schema).getMethod("stub", io.switchboard.protocol.Channel.class).invoke(null, channel);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }

    Class<?> beanClass(RandomSchemas.Schema schema, String schemaName) {
        try {
            return loader.loadClass(schema.javaPackage() + "." + Character.toUpperCase(schemaName.charAt(0))
                    + schemaName.substring(1));
        } catch (ClassNotFoundException e) {
            throw new IllegalStateException(e);
        }
    }

    private Class<?> holder(RandomSchemas.Schema schema) throws ClassNotFoundException {
        return loader.loadClass(schema.javaPackage() + "." + schema.component() + "Component");
    }

    /** Closes {@code compiled} (when made) and deletes {@code dir} (when made), the sources and classes in it. */
    static void closeAndDelete(CompiledInterfaces compiled, Path dir) throws IOException {
        if (compiled != null) {
            compiled.close();
        }
        if (dir != null) {
            try (var files = Files.walk(dir)) {
                files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    @Override
    public void close() {
        try {
            loader.close();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
