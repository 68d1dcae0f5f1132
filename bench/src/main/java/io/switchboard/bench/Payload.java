package io.switchboard.bench;

import io.switchboard.components.echo.LinkEntry;

/**
 * What one cell sends, built once and sent by every protocol: the doubles, or the same list as the
 * generated {@link LinkEntry} (Switchboard) and as {@link JavaLinkEntry} (plain Java peers).
 * {@link #matches} checks an answer value by value, so the suite checks itself on every call.
 */
public record Payload(Workload workload, int size, double[] doubles, LinkEntry list, JavaLinkEntry javaList) {

    /** The payload of one cell; the JMH benchmarks use the same values. */
    public static Payload of(Workload workload, int size) {
        switch (workload) {
            case DOUBLES: {
                double[] values = new double[size];
                for (int i = 0; i < size; i++) {
                    values[i] = i * 1.000001 - size / 3.0;   // not all small integers: full-precision text in XML
                }
                return new Payload(workload, size, values, null, null);
            }
            case LIST: {
                LinkEntry head = null;
                JavaLinkEntry javaHead = null;
                for (int i = size - 1; i >= 0; i--) {   // built from the tail, without recursion
                    LinkEntry e = new LinkEntry();
                    e.setLlong(i * 1_000_003L);
                    e.setSshort((short) i);
                    e.setIint(i);
                    e.setFfloat(i / 2f);
                    e.setDdouble(i / 3.0);
                    e.setSstring(string(i));
                    e.setNextLink(head);
                    head = e;
                    JavaLinkEntry j = new JavaLinkEntry();
                    j.llong = e.getLlong();
                    j.sshort = e.getSshort();
                    j.iint = e.getIint();
                    j.ffloat = e.getFfloat();
                    j.ddouble = e.getDdouble();
                    j.sstring = e.getSstring();
                    j.nextLink = javaHead;
                    javaHead = j;
                }
                return new Payload(workload, size, null, head, javaHead);
            }
            default:
                return new Payload(workload, 0, null, null, null);
        }
    }

    /** An 8-character string, so that a node holds the 34 payload bytes the study counts. */
    private static String string(int i) {
        return Integer.toString(10_000_000 + i % 89_999_999);
    }

    /** The value the plain-Java peers send. */
    Object javaValue() {
        return workload == Workload.DOUBLES ? doubles : javaList;
    }

    /** Whether {@code back} equals what was sent, bit for bit. */
    boolean matches(Object back) {
        switch (workload) {
            case DOUBLES:
                if (!(back instanceof double[])) {
                    return false;
                }
                double[] b = (double[]) back;
                if (b.length != doubles.length) {
                    return false;
                }
                for (int i = 0; i < b.length; i++) {
                    if (Double.doubleToRawLongBits(b[i]) != Double.doubleToRawLongBits(doubles[i])) {
                        return false;
                    }
                }
                return true;
            case LIST:
                return back instanceof LinkEntry ? sameList((LinkEntry) back)
                        : back instanceof JavaLinkEntry && sameList((JavaLinkEntry) back);
            default:
                return true;
        }
    }

    private boolean sameList(LinkEntry b) {
        JavaLinkEntry a = javaList;   // same values as list
        while (a != null && b != null) {
            if (a.llong != b.getLlong() || a.sshort != b.getSshort() || a.iint != b.getIint()
                    || Float.compare(a.ffloat, b.getFfloat()) != 0 || Double.compare(a.ddouble, b.getDdouble()) != 0
                    || !a.sstring.equals(b.getSstring())) {
                return false;
            }
            a = a.nextLink;
            b = b.getNextLink();
        }
        return a == null && b == null;
    }

    private boolean sameList(JavaLinkEntry b) {
        JavaLinkEntry a = javaList;
        while (a != null && b != null) {
            if (a.llong != b.llong || a.sshort != b.sshort || a.iint != b.iint || Float.compare(a.ffloat, b.ffloat) != 0
                    || Double.compare(a.ddouble, b.ddouble) != 0 || !a.sstring.equals(b.sstring)) {
                return false;
            }
            a = a.nextLink;
            b = b.nextLink;
        }
        return a == null && b == null;
    }
}
