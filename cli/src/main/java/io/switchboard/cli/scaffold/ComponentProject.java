package io.switchboard.cli.scaffold;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.stream.Stream;
import javax.lang.model.SourceVersion;

/**
 * A standalone Maven project for one component of a team's own, as {@code ./switchboard new}
 * writes it: a pom that imports {@code switchboard-bom} and runs the interface compiler with the
 * implementation configured, the schema (one idempotent operation {@code sum}), the implementation,
 * a JUnit 5 test that serves it and calls it over every protocol, a README. The files come from the
 * templates beside this class; the versions from {@code versions.properties}, which the build fills in.
 *
 * <pre>{@code
 * ComponentProject stats = ComponentProject.of("Stats", "org.acme.stats");   // checks both names
 * List<Path> written = stats.writeTo(Path.of("/tmp/stats"));                 // refuses a non-empty directory
 * }</pre>
 */
public final class ComponentProject {
    /** The project's version, so its jar is {@code target/<lower-case name>-1.0-SNAPSHOT.jar}. */
    static final String VERSION = "1.0-SNAPSHOT";

    /**
     * Names a component cannot take: the generated beans of {@code sum} ({@code Sum}, {@code
     * SumResponse}) would collide with its interface.
     */
    private static final Set<String> TAKEN_BY_THE_SCHEMA = Set.of("Sum", "SumResponse");

    private final String component;
    private final String javaPackage;
    /** A Spring Boot application serving the component, rather than a jar for {@code ./switchboard serve}. */
    private final boolean spring;

    private ComponentProject(String component, String javaPackage, boolean spring) {
        this.component = component;
        this.javaPackage = javaPackage;
        this.spring = spring;
    }

    /**
     * @param component   the component's name, a Java class name starting with a capital ({@code Stats})
     * @param javaPackage the package of its code, or null for {@code com.example.<lower-case name>}
     * @throws IllegalArgumentException either name cannot be used, saying why
     */
    public static ComponentProject of(String component, String javaPackage) {
        checkComponent(component);
        String pkg = javaPackage == null ? "com.example." + component.toLowerCase(Locale.ROOT) : javaPackage;
        checkPackage(pkg);
        return new ComponentProject(component, pkg, false);
    }

    /**
     * The same component in a Spring Boot application: the starter, an application class, the
     * implementation a bean marked {@code @SwitchboardComponent}, a {@code @SpringBootTest} calling it
     * through a registry over soap, grpc and tcp, {@code application.properties}.
     */
    public ComponentProject springBoot() {
        return new ComponentProject(component, javaPackage, true);
    }

    private static void checkComponent(String name) {
        if (name == null || !name.matches("[A-Z][A-Za-z0-9]{0,63}")) {
            throw new IllegalArgumentException("component name '" + name + "' must start with a capital letter and "
                    + "hold only letters and digits, at most 64 (it names Java classes: Stats, StatsService, ...)");
        }
        if (TAKEN_BY_THE_SCHEMA.contains(name)) {
            throw new IllegalArgumentException("component name '" + name + "' is the name of a class generated for "
                    + "the operation sum; choose another");
        }
        if (isJavaLang(name)) {
            throw new IllegalArgumentException("component name '" + name + "' is a class of java.lang; generated "
                    + "code would not compile, choose another");
        }
    }

    /** Generated code uses java.lang's classes by simple name, so a component named like one shadows it. */
    private static boolean isJavaLang(String name) {
        try {
            Class.forName("java.lang." + name, false, ClassLoader.getPlatformClassLoader());
            return true;
        } catch (ClassNotFoundException e) {
            return false;
        }
    }

    private static void checkPackage(String pkg) {
        if (!pkg.matches("[a-zA-Z_][A-Za-z0-9_]*(\\.[a-zA-Z_][A-Za-z0-9_]*)*") || !SourceVersion.isName(pkg)) {
            throw new IllegalArgumentException("'" + pkg + "' is not a Java package name (dot-separated identifiers, "
                    + "no keywords: org.acme.stats)");
        }
        if (pkg.equals("java") || pkg.startsWith("java.")) {
            throw new IllegalArgumentException("package '" + pkg + "' is reserved for the JDK");
        }
    }

    public String component() {
        return component;
    }

    public String javaPackage() {
        return javaPackage;
    }

    /** The lower-case name: the schema's file name and the project's artifactId. */
    public String lowerName() {
        return component.toLowerCase(Locale.ROOT);
    }

    /** The jar {@code mvn package} builds, relative to the project's directory. */
    public Path jar() {
        return Path.of("target", lowerName() + "-" + VERSION + ".jar");
    }

    /**
     * Writes the project into {@code dir}, which may exist only if empty.
     *
     * @return the files written, relative to {@code dir}
     * @throws IllegalArgumentException {@code dir} is a file, or a directory that is not empty
     */
    public List<Path> writeTo(Path dir) throws IOException {
        if (Files.exists(dir)) {
            if (!Files.isDirectory(dir)) {
                throw new IllegalArgumentException(dir + " is a file; give a directory to create");
            }
            try (Stream<Path> entries = Files.list(dir)) {
                if (entries.findAny().isPresent()) {
                    throw new IllegalArgumentException(dir + " exists and is not empty; give a new or empty directory");
                }
            }
        }
        String packagePath = javaPackage.replace('.', '/');
        Map<String, String> values = values(packagePath);
        Map<Path, String> files = spring ? springFiles(packagePath) : plainFiles(packagePath);
        List<Path> written = new ArrayList<>();
        for (Map.Entry<Path, String> f : files.entrySet()) {
            Path target = dir.resolve(f.getKey());
            Files.createDirectories(target.getParent());
            Files.writeString(target, fill(resource(f.getValue()), values), StandardCharsets.UTF_8);
            written.add(f.getKey());
        }
        return written;
    }

    private Map<Path, String> springFiles(String packagePath) {
        Map<Path, String> files = new LinkedHashMap<>();
        files.put(Path.of("pom.xml"), "spring/pom.xml.template");
        files.put(Path.of("src/main/xsd", lowerName() + ".xsd"), "schema.xsd.template");
        files.put(Path.of("src/main/java", packagePath, component + "Application.java"), "spring/Application.java.template");
        files.put(Path.of("src/main/java", packagePath, component + "Service.java"), "spring/Service.java.template");
        files.put(Path.of("src/main/resources/application.properties"), "spring/application.properties.template");
        files.put(Path.of("src/test/java", packagePath, component + "ServiceTest.java"), "spring/ServiceTest.java.template");
        files.put(Path.of("README.md"), "spring/README.md.template");
        files.put(Path.of(".gitignore"), "gitignore.template");
        return files;
    }

    private Map<Path, String> plainFiles(String packagePath) {
        Map<Path, String> files = new LinkedHashMap<>();
        files.put(Path.of("pom.xml"), "pom.xml.template");
        files.put(Path.of("src/main/xsd", lowerName() + ".xsd"), "schema.xsd.template");
        files.put(Path.of("src/main/java", packagePath, component + "Service.java"), "Service.java.template");
        files.put(Path.of("src/test/java", packagePath, component + "ServiceTest.java"), "ServiceTest.java.template");
        files.put(Path.of("src/test/resources/simplelogger.properties"), "simplelogger.properties.template");
        files.put(Path.of("README.md"), "README.md.template");
        files.put(Path.of(".gitignore"), "gitignore.template");
        return files;
    }

    private Map<String, String> values(String packagePath) {
        Properties versions = new Properties();
        try (InputStream in = ComponentProject.class.getResourceAsStream("versions.properties")) {
            if (in == null) {
                throw new IllegalStateException("versions.properties is missing: the cli module was not built");
            }
            versions.load(in);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return Map.of("component", component, "lower", lowerName(), "package", javaPackage,
                "packagePath", packagePath,
                "switchboardVersion", versions.getProperty("switchboard.version"),
                "junitVersion", versions.getProperty("junit.version"),
                "slf4jVersion", versions.getProperty("slf4j.version"),
                "springBootVersion", versions.getProperty("spring-boot.version"),
                "micrometerVersion", versions.getProperty("micrometer.version"),
                "nettyVersion", versions.getProperty("netty.version"));
    }

    private static String resource(String name) {
        try (InputStream in = ComponentProject.class.getResourceAsStream(name)) {
            if (in == null) {
                throw new IllegalStateException("template " + name + " is missing from the class path");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Replaces each {@code {{key}}}; a placeholder left over is a bug in a template, caught here. */
    static String fill(String template, Map<String, String> values) {
        String text = template;
        for (Map.Entry<String, String> v : values.entrySet()) {
            text = text.replace("{{" + v.getKey() + "}}", v.getValue());
        }
        int left = text.indexOf("{{");
        if (left >= 0) {
            throw new IllegalStateException("a template placeholder has no value: "
                    + text.substring(left, Math.min(text.length(), left + 30)));
        }
        return text;
    }
}
