package io.switchboard.idl.runtime;

import jakarta.xml.bind.annotation.adapters.XmlAdapter;
import java.time.OffsetDateTime;
import java.time.format.DateTimeFormatter;

/**
 * Maps {@code xs:dateTime} to {@link OffsetDateTime}, keeping the offset as written. A value
 * without an offset is read as UTC. Strict both ways ({@link XsdValues}): a lexical form outside
 * {@code YYYY-MM-DDThh:mm:ss(.f)(Z|±hh:mm)}, and a value whose year or offset that form cannot
 * say, are refused rather than changed.
 */
public final class OffsetDateTimeAdapter extends XmlAdapter<String, OffsetDateTime> {
    @Override
    public OffsetDateTime unmarshal(String text) {
        if (text == null) {
            return null;
        }
        try {
            return XsdValues.parseDateTime(text);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("not an xs:dateTime: '" + abbreviate(text.strip()) + "': "
                    + e.getMessage(), e);
        }
    }

    private static String abbreviate(String s) {
        return s.length() <= 40 ? s : s.substring(0, 40) + "...";
    }

    @Override
    public String marshal(OffsetDateTime value) {
        if (value == null) {
            return null;
        }
        String problem = XsdValues.dateTimeProblem(value);
        if (problem != null) {
            throw new IllegalArgumentException("date-time " + value + " cannot be sent: " + problem);
        }
        return DateTimeFormatter.ISO_OFFSET_DATE_TIME.format(value);
    }
}
