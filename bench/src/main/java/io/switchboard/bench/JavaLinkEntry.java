package io.switchboard.bench;

import java.io.Serializable;

/**
 * The study's {@code LinkEntry}, as plain Java: what Java RMI, ObjectOutputStream and the raw
 * socket peers send. (The Switchboard peer sends the generated
 * {@link io.switchboard.components.echo.LinkEntry}, which is not {@link Serializable}.)
 */
public final class JavaLinkEntry implements Serializable {
    private static final long serialVersionUID = 1L;

    public long llong;
    public short sshort;
    public int iint;
    public float ffloat;
    public double ddouble;
    public String sstring;
    public JavaLinkEntry nextLink;
}
