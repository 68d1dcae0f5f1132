package io.switchboard.idl.runtime;

import io.switchboard.idl.OperationModel;
import java.util.Objects;
import java.util.function.Function;
import javax.xml.namespace.QName;

/**
 * What the runtime needs to know of one operation: its model and the Java classes generated for
 * its request, response and fault elements. Generated code creates these; users rarely need to.
 */
public final class OperationDescriptor {
    private final ServiceDescriptor service;
    private final String name;
    private final Class<?> requestClass;
    private final Class<?> responseClass;
    private final Class<?> faultInfoClass;
    private final Function<Object, ? extends DeclaredFault> faultFactory;
    private volatile OperationModel model;
    private final QName requestElement;
    private final QName responseElement;
    private final QName faultElement;
    private final String soapAction;
    /** {@code Service.operation}: made once, since transports name the call with it on every call. */
    private final String qualifiedName;

    OperationDescriptor(ServiceDescriptor service, Builder b) {
        this.service = service;
        this.name = b.name;
        // made once: transports name the elements on every call
        this.requestElement = new QName(service.namespace(), name);
        this.responseElement = new QName(service.namespace(), name + "Response");
        this.faultElement = new QName(service.namespace(), name + "Fault");
        this.soapAction = soapAction(service.namespace(), name);
        this.qualifiedName = service.name() + "." + name;
        this.requestClass = b.requestClass;
        this.responseClass = b.responseClass;
        this.faultInfoClass = b.faultInfoClass;
        this.faultFactory = b.faultFactory;
    }

    public ServiceDescriptor service() {
        return service;
    }

    public String name() {
        return name;
    }

    public OperationModel model() {
        OperationModel m = model;
        if (m == null) {
            // found once: searching the interface's operations costs more than a small call
            model = m = service.model().operation(name);
        }
        return m;
    }

    public boolean idempotent() {
        return model().idempotent();
    }

    /**
     * Whether an in-process call may share the request and response objects between caller and
     * component instead of copying them ({@code byReference="true"} in the schema's
     * {@code sb:operation}).
     */
    public boolean byReference() {
        return model().byReference();
    }

    public boolean oneWay() {
        return responseClass == null;
    }

    public Class<?> requestClass() {
        return requestClass;
    }

    /** Null for a one-way operation. */
    public Class<?> responseClass() {
        return responseClass;
    }

    /** Null when the operation declares no fault. */
    public Class<?> faultInfoClass() {
        return faultInfoClass;
    }

    public QName requestElement() {
        return requestElement;
    }

    public QName responseElement() {
        return responseElement;
    }

    public QName faultElement() {
        return faultElement;
    }

    /** The SOAPAction of this operation, as the WSDL declares it. */
    public String soapAction() {
        return soapAction;
    }

    /** SOAPAction convention shared by the WSDL writer and the SOAP protocol: {@code namespace/operation}. */
    public static String soapAction(String namespace, String operation) {
        return namespace + (namespace.endsWith("/") ? "" : "/") + operation;
    }

    /** Turns a received fault bean back into the declared exception. */
    public DeclaredFault toException(Object faultInfo) {
        if (faultFactory == null) {
            throw new IllegalStateException(name + " declares no fault");
        }
        return faultFactory.apply(faultInfo);
    }

    @Override
    public String toString() {
        return qualifiedName;
    }

    /** Builder used by generated descriptors. */
    public static final class Builder {
        private final String name;
        private Class<?> requestClass;
        private Class<?> responseClass;
        private Class<?> faultInfoClass;
        private Function<Object, ? extends DeclaredFault> faultFactory;

        public Builder(String name) {
            this.name = Objects.requireNonNull(name);
        }

        public Builder request(Class<?> c) {
            this.requestClass = c;
            return this;
        }

        public Builder response(Class<?> c) {
            this.responseClass = c;
            return this;
        }

        public <F> Builder fault(Class<F> infoClass, Function<F, ? extends DeclaredFault> factory) {
            this.faultInfoClass = infoClass;
            this.faultFactory = info -> factory.apply(infoClass.cast(info));
            return this;
        }
    }
}
