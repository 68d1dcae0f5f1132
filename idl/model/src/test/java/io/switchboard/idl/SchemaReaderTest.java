package io.switchboard.idl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.RandomAccessFile;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SchemaReaderTest {
    private static String schema(String body) {
        return "<xs:schema xmlns:xs='http://www.w3.org/2001/XMLSchema' xmlns:tns='urn:t' targetNamespace='urn:t'"
                + " elementFormDefault='qualified'>"
                + "<xs:annotation><xs:appinfo><sb:component xmlns:sb='urn:switchboard:idl' name='T'>"
                + "<sb:operation name='op' idempotent='true'/></sb:component></xs:appinfo></xs:annotation>"
                + body + "</xs:schema>";
    }

    private static final String OP = "<xs:element name='op'><xs:complexType><xs:sequence>"
            + "<xs:element name='head' type='tns:Node' minOccurs='0'/>"
            + "<xs:element name='values' type='xs:double' minOccurs='0' maxOccurs='unbounded'/>"
            + "</xs:sequence></xs:complexType></xs:element>"
            + "<xs:element name='opResponse'><xs:complexType><xs:sequence/></xs:complexType></xs:element>"
            + "<xs:element name='opFault'><xs:complexType><xs:sequence>"
            + "<xs:element name='reason' type='xs:string'/></xs:sequence></xs:complexType></xs:element>";

    private static final String NODE = "<xs:complexType name='Node'><xs:sequence>"
            + "<xs:element name='value' type='xs:long'/>"
            + "<xs:element name='other' type='tns:Other' minOccurs='0'/>"
            + "<xs:element name='next' type='tns:Node' minOccurs='0'/></xs:sequence></xs:complexType>"
            + "<xs:complexType name='Other'><xs:sequence><xs:element name='back' type='tns:Node' minOccurs='0'/>"
            + "</xs:sequence></xs:complexType>"
            + "<xs:complexType name='Leaf'><xs:sequence><xs:element name='x' type='xs:int'/></xs:sequence></xs:complexType>";

    @Test
    void readsOperationsFaultsMarksAndRecursion() {
        InterfaceModel m = SchemaReader.read(schema(NODE + OP));
        assertEquals("T", m.componentName());
        assertEquals("urn:t", m.targetNamespace());
        OperationModel op = m.operation("op");
        assertTrue(op.idempotent());
        assertFalse(op.oneWay());
        assertEquals("opFault", op.fault().name());
        assertTrue(op.request().field("head").orElseThrow().graphReference(), "a field of a recursive type");
        FieldModel values = op.request().field("values").orElseThrow();
        assertTrue(values.repeated() && values.isPackedArray() && values.optional());
        assertTrue(m.type("Node").recursive(), "self-reference");
        assertTrue(m.type("Other").recursive(), "mutual recursion puts both types in one cycle");
        assertFalse(m.type("Leaf").recursive());
        assertTrue(m.type("Node").field("other").orElseThrow().graphReference());
        assertFalse(m.type("Node").field("value").orElseThrow().graphReference());
    }

    @Test
    void oneWayOperationHasNoResponse() {
        String s = schema("<xs:element name='op'><xs:complexType><xs:sequence/></xs:complexType></xs:element>")
                .replace("idempotent='true'", "oneWay='true'");
        OperationModel op = SchemaReader.read(s).operation("op");
        assertTrue(op.oneWay());
        assertNull(op.response());
    }

    @Test
    void refusesDtdsAndExternalEntities() {
        String withDtd = "<!DOCTYPE x [<!ENTITY e SYSTEM 'file:///etc/passwd'>]>" + schema(NODE + OP);
        SchemaException e = assertThrows(SchemaException.class, () -> SchemaReader.read(withDtd));
        assertTrue(e.getMessage().contains("DTD") || e.getMessage().contains("DOCTYPE"), e.getMessage());
    }

    @Test
    void refusesImportsSoNothingIsFetched() {
        String s = schema("<xs:import namespace='urn:x' schemaLocation='http://example.invalid/x.xsd'/>" + NODE + OP);
        assertTrue(assertThrows(SchemaException.class, () -> SchemaReader.read(s)).getMessage().contains("xs:import"));
    }

    @Test
    void refusesOversizeSchemas() {
        byte[] big = new byte[SchemaReader.MAX_SCHEMA_BYTES + 1];
        assertTrue(assertThrows(SchemaException.class, () -> SchemaReader.read(big, "big.xsd")).getMessage()
                .contains("larger than the limit"));
    }

    @Test
    void aSchemaFileOfGigabytesIsRefusedAfterItsFirstMegabyte(@TempDir Path dir) throws Exception {
        Path huge = dir.resolve("huge.xsd");
        try (RandomAccessFile f = new RandomAccessFile(huge.toFile(), "rw")) {
            f.setLength(3L << 30);   // sparse: 3 GiB that take no disk, more than any array holds
        }
        assertTrue(assertThrows(SchemaException.class, () -> SchemaReader.read(huge)).getMessage()
                .contains("larger than the limit"));
    }

    @Test
    void namesWhatIsUnsupported() {
        for (List<String> c : List.of(
                List.of("<xs:complexType name='A'><xs:choice/></xs:complexType>", "xs:choice"),
                List.of("<xs:complexType name='A'><xs:sequence><xs:element name='d' type='xs:decimal'/></xs:sequence>"
                        + "</xs:complexType>", "xs:decimal"),
                List.of("<xs:complexType name='A'><xs:sequence><xs:element name='d' type='tns:Missing'/></xs:sequence>"
                        + "</xs:complexType>", "not declared"),
                List.of("<xs:element name='stray'><xs:complexType><xs:sequence/></xs:complexType></xs:element>",
                        "'stray' is not part of an operation"))) {
            SchemaException e = assertThrows(SchemaException.class, () -> SchemaReader.read(schema(NODE + OP + c.get(0))),
                    c.get(1));
            assertTrue(e.getMessage().contains(c.get(1)), e.getMessage());
        }
    }

    @Test
    void needsAComponentNameAndAnOperation() {
        String noComponent = schema(NODE + OP).replaceAll("<xs:annotation>.*</xs:annotation>", "");
        assertTrue(assertThrows(SchemaException.class, () -> SchemaReader.read(noComponent)).getMessage()
                .contains("sb:component"));
        String markOnly = schema(NODE).replace("", "");
        assertThrows(SchemaException.class, () -> SchemaReader.read(markOnly));
    }

    private static final String ND_OP = "<xs:element name='op'><xs:complexType><xs:sequence>"
            + "<xs:element name='m' type='tns:M' minOccurs='0'/></xs:sequence></xs:complexType></xs:element>"
            + "<xs:element name='opResponse'><xs:complexType><xs:sequence/></xs:complexType></xs:element>";

    private static String ndType(String fields) {
        return "<xs:complexType name='M'><xs:annotation><xs:appinfo><sb:ndarray xmlns:sb='urn:switchboard:idl'/>"
                + "</xs:appinfo></xs:annotation><xs:sequence>" + fields + "</xs:sequence></xs:complexType>";
    }

    @Test
    void readsAnNdArrayTypeAndTheByReferenceMark() {
        String body = ndType("<xs:element name='shape' type='xs:int' minOccurs='0' maxOccurs='unbounded'/>"
                + "<xs:element name='values' type='xs:float' minOccurs='0' maxOccurs='unbounded'/>") + ND_OP;
        InterfaceModel m = SchemaReader.read(schema(body).replace("idempotent='true'", "byReference='true'"));
        assertTrue(m.type("M").ndArray());
        assertEquals(ScalarType.FLOAT, m.type("M").ndArrayElement());
        assertTrue(m.operation("op").byReference());
        assertFalse(m.operation("op").idempotent());
        assertFalse(SchemaReader.read(schema(NODE + OP)).operation("op").byReference(), "value semantics by default");
    }

    @Test
    void refusesAnNdArrayTypeThatBreaksTheConvention() {
        for (String fields : new String[] {
            "<xs:element name='values' type='xs:double' maxOccurs='unbounded'/>",
            "<xs:element name='shape' type='xs:long' maxOccurs='unbounded'/>"
                    + "<xs:element name='values' type='xs:double' maxOccurs='unbounded'/>",
            "<xs:element name='shape' type='xs:int' maxOccurs='unbounded'/>"
                    + "<xs:element name='values' type='xs:string' maxOccurs='unbounded'/>",
            "<xs:element name='shape' type='xs:int' maxOccurs='unbounded'/>"
                    + "<xs:element name='values' type='xs:double'/>"}) {
            SchemaException e = assertThrows(SchemaException.class, () -> SchemaReader.read(schema(ndType(fields) + ND_OP)));
            assertTrue(e.getMessage().contains("type M") && e.getMessage().contains("sb:ndarray"), e.getMessage());
        }
    }

    private static final String LIST_OP = "<xs:element name='op'><xs:complexType><xs:sequence>"
            + "<xs:element name='l' type='tns:L' minOccurs='0'/></xs:sequence></xs:complexType></xs:element>"
            + "<xs:element name='opResponse'><xs:complexType><xs:sequence/></xs:complexType></xs:element>";

    private static String listType(String alternatives) {
        return "<xs:complexType name='L'><xs:choice minOccurs='0' maxOccurs='unbounded'>" + alternatives
                + "</xs:choice></xs:complexType>";
    }

    @Test
    void readsAHeterogeneousListTypeThatNestsItselfWithoutMakingItLinked() {
        String holder = "<xs:complexType name='H'><xs:sequence><xs:element name='inner' type='tns:L' minOccurs='0'/>"
                + "</xs:sequence></xs:complexType>";
        InterfaceModel m = SchemaReader.read(schema(listType("<xs:element name='d' type='xs:double'/>"
                + "<xs:element name='h' type='tns:H'/><xs:element name='list' type='tns:L'/>") + holder + LIST_OP));
        assertTrue(m.type("L").heterogeneousList());
        assertEquals(java.util.List.of("d", "h", "list"), m.type("L").fields().stream().map(FieldModel::name).toList());
        assertFalse(m.type("L").recursive(), "a list nests by value, bounded by the depth limit");
        assertFalse(m.type("H").recursive(), "a cycle through a list type is not a linked structure");
        assertFalse(m.type("H").fields().get(0).graphReference());
    }

    @Test
    void refusesHeterogeneousListsItCannotCarryExactly() {
        String[][] cases = {
            {listType("<xs:element name='a' type='xs:double'/><xs:element name='b' type='xs:double'/>"), "each alternative"},
            {listType("<xs:element name='a' type='xs:double' maxOccurs='2'/>"), "maxOccurs"},
            {listType("<xs:element name='a' type='xs:double' nillable='true'/>"), "no nulls"},
            {listType("<xs:element name='a' type='xs:dateTime'/>"), "xs:dateTime"},
            {listType("<xs:element name='n' type='tns:Node'/>") + NODE, "linked (recursive) type Node"},
            {listType(""), "no elements"},
            {"<xs:complexType name='L'><xs:choice maxOccurs='unbounded'><xs:element name='a' type='xs:int'/>"
                    + "</xs:choice></xs:complexType>", "minOccurs=\"0\""},
        };
        for (String[] c : cases) {
            SchemaException e = assertThrows(SchemaException.class, () -> SchemaReader.read(schema(c[0] + LIST_OP)));
            assertTrue(e.getMessage().contains(c[1]), c[1] + " in: " + e.getMessage());
        }
    }
}
