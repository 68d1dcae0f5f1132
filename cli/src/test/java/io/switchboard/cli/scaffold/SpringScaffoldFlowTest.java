package io.switchboard.cli.scaffold;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.cli.Main;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code ./switchboard new DIR --component Name --spring} writes a Spring Boot application that
 * builds with a plain {@code mvn package} outside the repository against this build's artifacts, and
 * whose {@code @SpringBootTest} calls the component through a registry over soap, grpc and tcp.
 */
class SpringScaffoldFlowTest {
    @TempDir
    Path tmp;

    @Test
    void theSpringProjectBuildsAndItsTestCallsTheComponentOverEveryProtocol() throws Exception {
        Path project = tmp.resolve("stats-boot");
        assertFalse(project.toAbsolutePath().startsWith(Reactor.root()), "the project lives outside the repository");
        assertEquals(0, Main.run("new", project.toString(), "--component", "Stats", "--package", "org.acme.stats",
                "--spring"));
        String application = Files.readString(project.resolve("src/main/java/org/acme/stats/StatsService.java"));
        assertTrue(application.contains("@SwitchboardComponent"), application);

        Path repository = PrivateMavenRepository.create(Files.createDirectories(tmp.resolve("m2")),
                PrivateMavenRepository.shared());
        String build = ChildMaven.build(project, repository, tmp.resolve("maven"), "package");
        assertTrue(build.contains("Running org.acme.stats.StatsServiceTest")
                && build.contains("Tests run: 3, Failures: 0, Errors: 0, Skipped: 0"), "the generated test ran:\n" + build);
        assertTrue(Files.isRegularFile(project.resolve("target/stats-1.0-SNAPSHOT.jar")), build);
    }

    @Test
    void withoutSpringTheProjectHasNoSpring() throws Exception {
        Path project = tmp.resolve("stats");
        assertEquals(0, Main.run("new", project.toString(), "--component", "Stats"));
        assertFalse(Files.readString(project.resolve("pom.xml")).contains("spring"), "a plain project");
        assertFalse(Files.exists(project.resolve("src/main/resources/application.properties")));
    }
}
