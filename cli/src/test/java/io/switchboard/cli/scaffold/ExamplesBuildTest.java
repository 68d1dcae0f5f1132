package io.switchboard.cli.scaffold;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.cli.CommandOutput;
import io.switchboard.cli.OutputLines;
import io.switchboard.registry.RegistryClient;
import io.switchboard.registry.server.RegistryServer;
import io.switchboard.testing.PythonPeers;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every project in examples/ builds on its own, as a user who copied the folder builds it: copied out
 * of the repository, {@code mvn -B package} there against this build's artifacts (a {@link
 * PrivateMavenRepository}), nothing but the BOM's version tying it to the checkout. The Python
 * example's component and client then run on the switchboard package and meet a Java registry.
 */
class ExamplesBuildTest {
    private static final Duration STEP = Duration.ofMinutes(2);
    private final List<Process> processes = new ArrayList<>();

    @TempDir
    Path tmp;

    @AfterEach
    void stopChildren() {
        processes.forEach(Process::destroyForcibly);
    }

    @Test
    void everyExampleIsAMavenProjectWithAReadmeOnThisBuildsVersion() throws Exception {
        List<Path> examples = examples();
        assertEquals(List.of("java", "python", "spring-boot"), examples.stream().map(p -> p.getFileName().toString()).toList());
        for (Path example : examples) {
            assertTrue(Files.isRegularFile(example.resolve("README.md")), example + " has a README");
            String version = Reactor.pom(example.resolve("pom.xml")).getElementsByTagName("switchboard.version").item(0)
                    .getTextContent().strip();
            assertEquals(Reactor.version(), version, example + " builds against this build's version");
        }
    }

    @Test
    void theJavaExampleBuildsAndItsServerAndClientMeetInARegistry() throws Exception {
        Path project = copy("java");
        String build = ChildMaven.build(project, repository(), tmp.resolve("maven-java"), "package");
        assertTrue(build.contains("Tests run: 3, Failures: 0, Errors: 0, Skipped: 0"), "GreeterTest ran:\n" + build);
        assertTrue(Files.isRegularFile(project.resolve("target/greeter-1.0-SNAPSHOT.jar")), build);
        assertTrue(Files.readString(project.resolve("target/classpath.txt")).contains("switchboard-server"));
    }

    @Test
    void theSpringBootExampleBuildsAndItsTestCallsItsComponentOverEveryProtocol() throws Exception {
        Path project = copy("spring-boot");
        String build = ChildMaven.build(project, repository(), tmp.resolve("maven-spring-boot"), "package");
        assertTrue(build.contains("Tests run: 5, Failures: 0, Errors: 0, Skipped: 0"),
                "GreeterApplicationTest ran:\n" + build);
        // the runnable jar spring-boot:repackage makes, with the starter inside
        Path jar = project.resolve("target/greeter-spring-boot-1.0-SNAPSHOT.jar");
        assertTrue(Files.isRegularFile(jar), build);
        try (java.util.jar.JarFile runnable = new java.util.jar.JarFile(jar.toFile())) {
            assertTrue(runnable.stream().anyMatch(e -> e.getName().matches(
                    "BOOT-INF/lib/switchboard-spring-boot-autoconfigure-.*\\.jar")), "the starter is packed in");
        }
    }

    @Test
    void thePythonExampleBuildsItsDocumentsAndItsComponentAnswersJavaAndPython() throws Exception {
        Path project = copy("python");
        String build = ChildMaven.build(project, repository(), tmp.resolve("maven-python"), "package");
        try (Stream<Path> generated = Files.walk(project.resolve("target/generated-resources/switchboard"))) {
            List<String> names = generated.map(p -> p.getFileName().toString()).toList();
            assertTrue(names.contains("Greeter.proto") && names.contains("Greeter.wsdl"), names + "\n" + build);
        }

        String python = PythonPeers.python(tmp);
        Map<String, String> env = Map.of("PYTHONPATH", PythonPeers.repositoryRoot().resolve("metastub/python/src").toString());
        try (RegistryServer registry = RegistryServer.builder().start();
             RegistryClient reader = RegistryClient.connect(registry.endpoint())) {
            Process component = start(project, env, python, "greeter_component.py", registry.endpoint());
            OutputLines out = new OutputLines(component);
            assertTrue(out.awaitLine("serving Greeter at", STEP).contains("http://"));
            assertEquals(1, reader.lookup("Greeter").size(), "bound in the registry");

            assertEquals("greeting = Hello, Ada!", CommandOutput.stdout(0, "call", "Greeter", "greet", "name=Ada",
                    "--registry", registry.endpoint()).strip(), "Java calls the Python component");

            Process client = start(project, env, python, "greeter_client.py", registry.endpoint(), "Grace");
            OutputLines answers = new OutputLines(client);
            assertTrue(client.waitFor(STEP.toSeconds(), TimeUnit.SECONDS), "the client ends");
            String printed = answers.all(STEP);
            assertEquals(0, client.exitValue(), printed);
            assertTrue(printed.startsWith("Hello, Grace!\naverage of 1.5 and 2.5: 2.0"), printed);

            component.destroy();   // SIGTERM: the component unbinds itself
            assertTrue(component.waitFor(STEP.toSeconds(), TimeUnit.SECONDS), "the component stops on SIGTERM");
            assertTrue(reader.lookup("Greeter").isEmpty(), "and unbinds first");
        }

        // no registry listening where it is told to bind (port 1 refuses at once): it exits saying so
        Process orphan = start(project, env, python, "greeter_component.py", "http://127.0.0.1:1/axis2/services/Registry");
        OutputLines orphanOut = new OutputLines(orphan);
        assertTrue(orphan.waitFor(STEP.toSeconds(), TimeUnit.SECONDS), "it ends");
        assertEquals(2, orphan.exitValue(), orphanOut.all(STEP) + Files.readString(tmp.resolve("greeter_component.py.err")));
        assertFalse(orphanOut.all(STEP).contains("serving"));
    }

    @Test
    void thePythonComponentOfAnUnbuiltExampleSaysToBuildIt() throws Exception {
        Path project = copy("python");
        String python = PythonPeers.python(tmp);
        Map<String, String> env = Map.of("PYTHONPATH", PythonPeers.repositoryRoot().resolve("metastub/python/src").toString());
        try (RegistryServer registry = RegistryServer.builder().start()) {
            Process component = start(project, env, python, "greeter_component.py", registry.endpoint());
            OutputLines out = new OutputLines(component);
            assertTrue(component.waitFor(STEP.toSeconds(), TimeUnit.SECONDS), "it ends");
            String err = Files.readString(tmp.resolve("greeter_component.py.err"));
            assertEquals(2, component.exitValue(), out.all(STEP) + err);
            assertTrue(err.contains("mvn package"), err);
        }
    }

    private static List<Path> examples() throws IOException {
        try (Stream<Path> dirs = Files.list(Reactor.root().resolve("examples"))) {
            return dirs.filter(Files::isDirectory).sorted().toList();
        }
    }

    /** The example copied out of the repository without any build output, as a user would copy it. */
    private Path copy(String name) throws IOException {
        Path from = Reactor.root().resolve("examples").resolve(name);
        Path to = tmp.resolve("work").resolve(name);
        assertFalse(to.toAbsolutePath().startsWith(Reactor.root()), "the copy lives outside the repository");
        try (Stream<Path> files = Files.walk(from)) {
            for (Path f : files.filter(f -> !from.relativize(f).startsWith("target")).toList()) {
                Path target = to.resolve(from.relativize(f).toString());
                if (Files.isDirectory(f)) {
                    Files.createDirectories(target);
                } else {
                    Files.copy(f, target, StandardCopyOption.REPLACE_EXISTING);
                }
            }
        }
        return to;
    }

    private Path repository() throws IOException {
        Path dir = tmp.resolve("m2");
        return Files.isDirectory(dir) ? dir
                : PrivateMavenRepository.create(Files.createDirectories(dir), PrivateMavenRepository.shared());
    }

    private Process start(Path project, Map<String, String> env, String python, String script, String... args)
            throws IOException {
        List<String> cmd = new ArrayList<>(List.of(python, project.resolve(script).toString()));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(project.toFile())
                .redirectError(tmp.resolve(script + ".err").toFile());
        pb.environment().putAll(env);
        Process p = pb.start();
        processes.add(p);
        return p;
    }
}
