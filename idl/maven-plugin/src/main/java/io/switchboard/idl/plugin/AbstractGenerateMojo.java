package io.switchboard.idl.plugin;

import io.switchboard.idl.SchemaException;
import io.switchboard.idl.compiler.GeneratedOutput;
import io.switchboard.idl.compiler.InterfaceCompiler;
import java.io.File;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.maven.model.Resource;
import org.apache.maven.plugin.AbstractMojo;
import org.apache.maven.plugin.MojoExecutionException;
import org.apache.maven.plugin.MojoFailureException;
import org.apache.maven.plugins.annotations.Parameter;
import org.apache.maven.project.MavenProject;

/** Shared by the main and test goals: compile each configured schema, add the output to the build. */
abstract class AbstractGenerateMojo extends AbstractMojo {
    @Parameter(defaultValue = "${project}", readonly = true, required = true)
    MavenProject project;

    /**
     * The schemas to compile:
     * {@code <schemas><schema><file>src/main/xsd/echo.xsd</file><packageName>com.example.echo</packageName></schema></schemas>};
     * a schema with {@code <implementation>com.example.echo.EchoService</implementation>} also gets a
     * component provider and its {@code META-INF/services} line in the generated resources.
     */
    @Parameter(required = true)
    List<SchemaSpec> schemas;

    @Parameter(property = "switchboard.skip", defaultValue = "false")
    boolean skip;

    abstract File sourceDir();

    abstract File resourceDir();

    abstract void addToBuild(String sources, Resource resources);

    @Override
    public void execute() throws MojoExecutionException, MojoFailureException {
        if (skip) {
            getLog().info("Switchboard interface compiler skipped");
            return;
        }
        InterfaceCompiler compiler = new InterfaceCompiler();
        Set<Path> written = new HashSet<>();
        Set<String> schemaFiles = new HashSet<>();
        for (SchemaSpec spec : schemas) {
            if (spec.file == null || spec.packageName == null) {
                throw new MojoFailureException("each <schema> needs <file> and <packageName>: " + spec);
            }
            File file = spec.file.isAbsolute() ? spec.file : new File(project.getBasedir(), spec.file.getPath());
            try {
                InterfaceCompiler.Result r = compiler.compile(file.toPath(), spec.packageName, sourceDir().toPath(),
                        resourceDir().toPath(), spec.implementation);
                written.addAll(r.sources());
                schemaFiles.add(file.getName());
                getLog().info("Compiled " + file.getName() + ": component " + r.model().componentName() + ", "
                        + r.model().operations().size() + " operations, " + r.sources().size() + " sources"
                        + (r.provider() == null ? "" : "; served from the class path as " + spec.implementation));
            } catch (SchemaException e) {
                throw new MojoFailureException(e.getMessage(), e);
            }
        }
        // classes an earlier compiler generated from these schemas and this one does not: only in the
        // build's own directory, so that a misdirected output never costs a source tree a file
        Path build = new File(project.getBuild().getDirectory()).toPath().toAbsolutePath().normalize();
        Path out = sourceDir().toPath().toAbsolutePath().normalize();
        if (out.startsWith(build) && !out.equals(build)) {
            for (Path stale : GeneratedOutput.removeStale(out, schemaFiles, written)) {
                getLog().info("Removed " + build.relativize(stale) + ": no longer generated from its schema");
            }
        }
        Resource resource = new Resource();
        resource.setDirectory(resourceDir().getAbsolutePath());
        addToBuild(sourceDir().getAbsolutePath(), resource);
    }
}
