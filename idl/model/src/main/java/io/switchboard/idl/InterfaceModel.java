package io.switchboard.idl;

import java.util.ArrayDeque;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.Set;

/**
 * A component interface read from one XML Schema document: its operations and the types they use.
 *
 * <pre>{@code
 * InterfaceModel echo = SchemaReader.read(Path.of("echo.xsd"));
 * OperationModel op = echo.operation("echoDoubles");
 * boolean retryable = op.idempotent();
 * }</pre>
 */
public final class InterfaceModel {
    private final String componentName;
    private final String targetNamespace;
    private final List<OperationModel> operations;
    private final Map<String, ComplexTypeModel> types;
    private final String schemaText;

    public InterfaceModel(String componentName, String targetNamespace, List<OperationModel> operations,
                          Map<String, ComplexTypeModel> types, String schemaText) {
        this.componentName = Objects.requireNonNull(componentName, "componentName");
        this.targetNamespace = Objects.requireNonNull(targetNamespace, "targetNamespace");
        this.operations = List.copyOf(operations);
        this.types = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(types));
        this.schemaText = Objects.requireNonNull(schemaText, "schemaText");
    }

    public String componentName() {
        return componentName;
    }

    public String targetNamespace() {
        return targetNamespace;
    }

    public List<OperationModel> operations() {
        return operations;
    }

    public OperationModel operation(String name) {
        return operations.stream().filter(o -> o.name().equals(name)).findFirst()
                .orElseThrow(() -> new NoSuchElementException(componentName + " has no operation " + name));
    }

    /** Named complex types, in document order. */
    public Map<String, ComplexTypeModel> types() {
        return types;
    }

    public ComplexTypeModel type(String name) {
        ComplexTypeModel t = types.get(name);
        if (t == null) {
            throw new NoSuchElementException(componentName + " has no type " + name);
        }
        return t;
    }

    /** The interface schema exactly as it was read. */
    public String schemaText() {
        return schemaText;
    }

    /** The recursive (linked) types whose instances a value of {@code type} may hold, directly or further down. */
    public Set<String> graphTypesReachableFrom(ComplexTypeModel type) {
        Set<String> result = new LinkedHashSet<>();
        Set<String> visited = new LinkedHashSet<>();
        ArrayDeque<ComplexTypeModel> work = new ArrayDeque<>();
        work.add(type);
        while (!work.isEmpty()) {
            ComplexTypeModel t = work.poll();
            for (FieldModel f : t.fields()) {
                if (f.complexType() != null && visited.add(f.complexType())) {
                    ComplexTypeModel target = type(f.complexType());
                    if (target.recursive()) {
                        result.add(target.name());
                    }
                    work.add(target);
                }
            }
        }
        return result;
    }

    @Override
    public String toString() {
        return "InterfaceModel[" + componentName + " " + targetNamespace + ", operations="
                + operations.stream().map(OperationModel::name).toList() + "]";
    }
}
