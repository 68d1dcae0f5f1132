package io.switchboard.codec.dynamic;

import io.switchboard.codec.XmlCodec;
import io.switchboard.codec.documents.InterfaceDocuments;
import io.switchboard.codec.message.MessageChecks;
import io.switchboard.idl.ComplexTypeModel;
import io.switchboard.idl.InterfaceModel;
import io.switchboard.idl.OperationModel;
import io.switchboard.idl.SchemaReader;
import io.switchboard.idl.runtime.OperationDescriptor;
import io.switchboard.idl.runtime.ServiceDescriptor;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;

/**
 * An interface read at run time, without generated code: its types as {@link DynamicType}s and a
 * {@link ServiceDescriptor} whose messages are {@link DynamicRecord}s, written and read by
 * model-driven codecs ({@link DynamicXml}, {@link DynamicProtoCodec}) that put exactly the bytes
 * of the generated codecs on the wire, and the checks every protocol makes before sending
 * ({@link DynamicMessageChecks}) that refuse what generated code refuses. Any transport, and the meta-stub, take the descriptor as
 * they take a generated one.
 *
 * <pre>{@code
 * DynamicInterface echo = DynamicInterface.of(SchemaReader.read(schemaText));   // the secure reader, with its limits
 * ServiceDescriptor d = echo.descriptor();
 * DynamicRecord request = echo.request("echoDoubles").set("values", new double[] {1, 2});
 * DynamicRecord response = (DynamicRecord) channel.call(d.operation("echoDoubles"), request, CallOptions.DEFAULT);
 * }</pre>
 */
public final class DynamicInterface {
    private final InterfaceModel model;
    private final Map<String, DynamicType> types = new LinkedHashMap<>();
    private final Map<String, DynamicType> messages = new LinkedHashMap<>();
    private final List<DynamicType> nodeTypes = new ArrayList<>();
    private final ServiceDescriptor descriptor;
    private final DynamicProtoCodec protoCodec;

    private DynamicInterface(InterfaceModel model) {
        this.model = model;
        for (ComplexTypeModel t : model.types().values()) {
            DynamicType d = new DynamicType(t);
            types.put(t.name(), d);
            if (t.recursive()) {
                d.nodeType = nodeTypes.size();   // document order, as the compiler numbers them
                nodeTypes.add(d);
            }
        }
        for (OperationModel op : model.operations()) {
            for (ComplexTypeModel m : new ComplexTypeModel[] {op.request(), op.response(), op.fault()}) {
                if (m != null) {
                    messages.put(m.name(), new DynamicType(m));
                }
            }
        }
        List<DynamicType> all = new ArrayList<>(types.values());
        all.addAll(messages.values());
        for (DynamicType d : all) {
            for (int i = 0; i < d.fields.length; i++) {
                if (!d.fields[i].isScalar()) {
                    d.targets[i] = types.get(d.fields[i].complexType());
                }
            }
        }
        // a type reaches the graph if a field refers to a node or holds a value that does; the
        // non-recursive types form a DAG, so iterating to a fixed point ends within its depth
        boolean changed = true;
        while (changed) {
            changed = false;
            for (DynamicType d : all) {
                for (int i = 0; i < d.fields.length; i++) {
                    DynamicType target = d.targets[i];
                    boolean visit = target != null && (d.fields[i].graphReference() || target.recursive()
                            || target.reachesGraph);
                    if (visit && !d.visits[i]) {
                        d.visits[i] = true;
                        changed = true;
                    }
                    if (visit && !d.reachesGraph) {
                        d.reachesGraph = true;
                        changed = true;
                    }
                }
            }
        }
        List<OperationDescriptor.Builder> ops = new ArrayList<>();
        for (OperationModel op : model.operations()) {
            OperationDescriptor.Builder b = new OperationDescriptor.Builder(op.name()).request(DynamicRecord.class);
            if (!op.oneWay()) {
                b.response(DynamicRecord.class);
            }
            if (op.fault() != null) {
                b.fault(DynamicRecord.class, info -> new DynamicFault(op.name(), info));
            }
            ops.add(b);
        }
        this.protoCodec = new DynamicProtoCodec(this);
        // the documents a compiled component carries as resources, in the same words but for their origin
        String origin = "Generated at run time by Switchboard's DynamicInterface from the schema of " + model.componentName();
        this.descriptor = ServiceDescriptor.builder(model.componentName(), model.targetNamespace(), null).model(model)
                .document(ServiceDescriptor.WSDL, () -> InterfaceDocuments.wsdl(model, origin))
                .document(ServiceDescriptor.PROTO, () -> InterfaceDocuments.proto(model, origin))
                .codec(MessageChecks.class, new DynamicMessageChecks(this))
                .codec(io.switchboard.codec.proto.ProtoCodec.class, protoCodec)
                .codec(XmlCodec.Factory.class, (d, maxNodes) -> new DynamicXml(this, maxNodes))
                .operations(ops).build();
    }

    /** The dynamic form of an interface model (read it with {@link SchemaReader}, which refuses DTDs and oversized schemas). */
    public static DynamicInterface of(InterfaceModel model) {
        return new DynamicInterface(model);
    }

    /**
     * Reads an interface schema with the secure {@link SchemaReader} (its size limit and refusals apply).
     *
     * @throws io.switchboard.idl.SchemaException a DTD, an import, over {@link SchemaReader#MAX_SCHEMA_BYTES}, or not a schema Switchboard reads
     */
    public static DynamicInterface fromSchema(String schemaText) {
        return of(SchemaReader.read(schemaText));
    }

    /**
     * Reads an interface schema file ({@code echo.xsd}) with the secure {@link SchemaReader}, as
     * the compiler reads it.
     *
     * @throws io.switchboard.idl.SchemaException as {@link #fromSchema(String)}, or the file cannot be read
     */
    public static DynamicInterface fromSchema(Path schemaFile) {
        return of(SchemaReader.read(schemaFile));
    }

    public InterfaceModel model() {
        return model;
    }

    /** The descriptor transports and the meta-stub take; its operations carry {@link DynamicRecord}s. */
    public ServiceDescriptor descriptor() {
        return descriptor;
    }

    /** The typed protobuf wire ({@code <Name>.proto}) for this interface's messages. */
    public DynamicProtoCodec protoCodec() {
        return protoCodec;
    }

    /** A named complex type. */
    public DynamicType type(String name) {
        DynamicType t = types.get(name);
        if (t == null) {
            throw new NoSuchElementException(model.componentName() + " has no type '" + name + "'; its types are "
                    + types.keySet());
        }
        return t;
    }

    /** A message element's type: {@code op}, {@code opResponse} or {@code opFault}. */
    public DynamicType message(String element) {
        DynamicType t = messages.get(element);
        if (t == null) {
            throw new NoSuchElementException(model.componentName() + " has no message element '" + element + "'");
        }
        return t;
    }

    /** A new, empty request of an operation. */
    public DynamicRecord request(String operation) {
        if (!descriptor.hasOperation(operation)) {
            throw new NoSuchElementException(model.componentName() + " has no operation '" + operation
                    + "'; its operations are " + model.operations().stream().map(OperationModel::name).toList());
        }
        return message(operation).newRecord();
    }

    DynamicType messageOrNull(String element) {
        return messages.get(element);
    }

    DynamicType typeOrNull(String name) {
        return types.get(name);
    }

    List<DynamicType> nodeTypes() {
        return nodeTypes;
    }

    Collection<DynamicType> messages() {
        return messages.values();
    }
}
