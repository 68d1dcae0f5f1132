package io.switchboard.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.components.echo.EchoComponent;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code ./switchboard compile}: the documents a component publishes, from its schema alone, the
 * very bytes the Maven plug-in wrote for the echo component; a schema the reader refuses (a DTD
 * with an external entity) or a missing one writes nothing. The Python suite serves its components
 * from this command's output ({@code PythonPackageTest}).
 */
class CompileCommandTest {
    @TempDir
    Path dir;

    @Test
    void theDocumentsAreTheBytesTheMavenPlugInWrote() throws IOException {
        Path schema = dir.resolve("echo.xsd");
        Files.write(schema, resource("echo.xsd"));
        String printed = CommandOutput.stdout(0, "compile", schema.toString());
        assertArrayEquals(resource("Echo.proto"), Files.readAllBytes(dir.resolve("Echo.proto")));
        assertArrayEquals(resource("Echo.wsdl"), Files.readAllBytes(dir.resolve("Echo.wsdl")));
        assertTrue(printed.contains("compiled  Echo ("), printed);
        assertTrue(printed.contains(dir.resolve("Echo.proto").toString()), printed);
    }

    @Test
    void theDocumentsGoWhereOutSaysMadeIfMissing() throws IOException {
        Path schema = dir.resolve("echo.xsd");
        Files.write(schema, resource("echo.xsd"));
        Path out = dir.resolve("build/documents");
        CommandOutput.stdout(0, "compile", schema.toString(), "--out", out.toString());
        assertArrayEquals(resource("Echo.proto"), Files.readAllBytes(out.resolve("Echo.proto")));
        assertArrayEquals(resource("Echo.wsdl"), Files.readAllBytes(out.resolve("Echo.wsdl")));
        assertFalse(Files.exists(dir.resolve("Echo.proto")), "written beside the schema too");
    }

    @Test
    void aSchemaWithAnExternalEntityIsRefusedAndNothingIsWritten() throws IOException {
        String echo = new String(resource("echo.xsd"), StandardCharsets.UTF_8);
        int root = echo.indexOf("<xs:schema");
        assertTrue(root >= 0, "the echo schema's root element");
        Path schema = dir.resolve("hostile.xsd");
        Files.writeString(schema, "<?xml version=\"1.0\"?><!DOCTYPE x [<!ENTITY e SYSTEM 'file:///etc/passwd'>]>"
                + echo.substring(root));
        String error = CommandOutput.stderr(1, "compile", schema.toString(), "--out", dir.resolve("out").toString());
        assertTrue(error.contains("DTD"), error);
        assertFalse(error.contains("root:"), "the entity was read: " + error);
        assertFalse(Files.exists(dir.resolve("out")), "a refused schema wrote something");
    }

    @Test
    void aMissingSchemaIsAnErrorThatNamesIt() throws IOException {
        String error = CommandOutput.stderr(1, "compile", dir.resolve("nothing.xsd").toString());
        assertTrue(error.startsWith("error: ") && error.contains("nothing.xsd"), error);
        try (Stream<Path> files = Files.list(dir)) {
            assertEquals(0, files.count());
        }
    }

    private static byte[] resource(String name) throws IOException {
        try (InputStream in = EchoComponent.class.getResourceAsStream(name)) {
            assertTrue(in != null, name + " beside EchoComponent");
            return in.readAllBytes();
        }
    }
}
