package io.switchboard.idl.runtime;

import jakarta.xml.bind.annotation.adapters.XmlAdapter;

/**
 * A repeated {@code xs:byte} field ({@code byte[]}) as the wire form's {@code xs:list} of bytes,
 * {@code "1 -2 127"}, as for every other repeated number. JAXB would take a {@code byte[]} for
 * {@code xs:base64Binary} and refuses {@code @XmlList} on it, so the generated bean names this
 * adapter instead. The text was checked ({@code io.switchboard.codec.StrictXmlReader}) before it gets here.
 */
public final class ByteListAdapter extends XmlAdapter<String, byte[]> {
    @Override
    public byte[] unmarshal(String text) {
        if (text == null) {
            return null;
        }
        String t = text.strip();
        if (t.isEmpty()) {
            return new byte[0];
        }
        String[] parts = t.split("[ \t\r\n]+");
        byte[] out = new byte[parts.length];
        for (int i = 0; i < parts.length; i++) {
            out[i] = Byte.parseByte(parts[i]);
        }
        return out;
    }

    @Override
    public String marshal(byte[] values) {
        if (values == null) {
            return null;
        }
        StringBuilder b = new StringBuilder(values.length * 4);
        for (int i = 0; i < values.length; i++) {
            if (i > 0) {
                b.append(' ');
            }
            b.append(values[i]);
        }
        return b.toString();
    }
}
