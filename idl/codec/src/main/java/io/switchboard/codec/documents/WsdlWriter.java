package io.switchboard.codec.documents;

import io.switchboard.idl.InterfaceModel;
import io.switchboard.idl.OperationModel;
import io.switchboard.idl.runtime.OperationDescriptor;

/**
 * Writes the WSDL 1.1 document (document/literal wrapped, SOAP 1.1 over HTTP) of a component,
 * with the wire schema inline. The address is a placeholder; a server rewrites it when it
 * serves {@code ?wsdl}.
 */
final class WsdlWriter {
    /** Replaced by the real endpoint by the server that exports the component. */
    static final String ADDRESS_PLACEHOLDER = "http://localhost:8080/axis2/services/";

    private final InterfaceModel model;
    private final String origin;

    WsdlWriter(InterfaceModel model, String origin) {
        this.model = model;
        this.origin = origin;
    }

    String write() {
        String name = model.componentName();
        String tns = Xml.attr(model.targetNamespace());
        StringBuilder w = new StringBuilder();
        w.append("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        w.append("<wsdl:definitions name=\"").append(name).append("\" targetNamespace=\"").append(tns).append("\"\n")
                .append("    xmlns:wsdl=\"http://schemas.xmlsoap.org/wsdl/\"\n")
                .append("    xmlns:soap=\"http://schemas.xmlsoap.org/wsdl/soap/\"\n")
                .append("    xmlns:xs=\"http://www.w3.org/2001/XMLSchema\"\n")
                .append("    xmlns:tns=\"").append(tns).append("\">\n");
        w.append("  <wsdl:documentation>").append(Xml.attr(origin)).append(".</wsdl:documentation>\n");
        w.append("  <wsdl:types>\n").append(new WireSchema(model).write(4)).append("  </wsdl:types>\n");
        for (OperationModel op : model.operations()) {
            message(w, op.name() + "Request", op.request().name(), "parameters");
            if (op.response() != null) {
                message(w, op.response().name(), op.response().name(), "parameters");
            }
            if (op.fault() != null) {
                message(w, op.fault().name(), op.fault().name(), "fault");
            }
        }
        w.append("  <wsdl:portType name=\"").append(name).append("PortType\">\n");
        for (OperationModel op : model.operations()) {
            w.append("    <wsdl:operation name=\"").append(op.name()).append("\">\n");
            w.append("      <wsdl:input message=\"tns:").append(op.name()).append("Request\"/>\n");
            if (op.response() != null) {
                w.append("      <wsdl:output message=\"tns:").append(op.response().name()).append("\"/>\n");
            }
            if (op.fault() != null) {
                w.append("      <wsdl:fault name=\"").append(op.fault().name()).append("\" message=\"tns:")
                        .append(op.fault().name()).append("\"/>\n");
            }
            w.append("    </wsdl:operation>\n");
        }
        w.append("  </wsdl:portType>\n");
        w.append("  <wsdl:binding name=\"").append(name).append("SoapBinding\" type=\"tns:").append(name)
                .append("PortType\">\n");
        w.append("    <soap:binding style=\"document\" transport=\"http://schemas.xmlsoap.org/soap/http\"/>\n");
        for (OperationModel op : model.operations()) {
            w.append("    <wsdl:operation name=\"").append(op.name()).append("\">\n");
            w.append("      <soap:operation soapAction=\"")
                    .append(Xml.attr(OperationDescriptor.soapAction(model.targetNamespace(), op.name())))
                    .append("\" style=\"document\"/>\n");
            w.append("      <wsdl:input><soap:body use=\"literal\"/></wsdl:input>\n");
            if (op.response() != null) {
                w.append("      <wsdl:output><soap:body use=\"literal\"/></wsdl:output>\n");
            }
            if (op.fault() != null) {
                w.append("      <wsdl:fault name=\"").append(op.fault().name()).append("\"><soap:fault name=\"")
                        .append(op.fault().name()).append("\" use=\"literal\"/></wsdl:fault>\n");
            }
            w.append("    </wsdl:operation>\n");
        }
        w.append("  </wsdl:binding>\n");
        w.append("  <wsdl:service name=\"").append(name).append("\">\n");
        w.append("    <wsdl:port name=\"").append(name).append("SoapPort\" binding=\"tns:").append(name)
                .append("SoapBinding\">\n");
        w.append("      <soap:address location=\"").append(ADDRESS_PLACEHOLDER).append(name).append("\"/>\n");
        w.append("    </wsdl:port>\n  </wsdl:service>\n</wsdl:definitions>\n");
        return w.toString();
    }

    private static void message(StringBuilder w, String name, String element, String part) {
        w.append("  <wsdl:message name=\"").append(name).append("\"><wsdl:part name=\"").append(part)
                .append("\" element=\"tns:").append(element).append("\"/></wsdl:message>\n");
    }
}
