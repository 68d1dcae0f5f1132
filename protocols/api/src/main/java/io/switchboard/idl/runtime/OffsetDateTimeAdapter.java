package io.switchboard.idl.runtime;

import jakarta.xml.bind.annotation.adapters.XmlAdapter;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.time.temporal.TemporalAccessor;

/**
 * Maps {@code xs:dateTime} to {@link OffsetDateTime}, keeping the offset as written. A value
 * without an offset is read as UTC.
 */
public final class OffsetDateTimeAdapter extends XmlAdapter<String, OffsetDateTime> {
    @Override
    public OffsetDateTime unmarshal(String text) {
        if (text == null) {
            return null;
        }
        String t = text.trim();
        try {
            TemporalAccessor parsed = DateTimeFormatter.ISO_DATE_TIME.parseBest(t, OffsetDateTime::from,
                    java.time.LocalDateTime::from);
            if (parsed instanceof OffsetDateTime odt) {
                return odt;
            }
            return ((java.time.LocalDateTime) parsed).atOffset(ZoneOffset.UTC);
        } catch (DateTimeParseException e) {
            throw new IllegalArgumentException("not an xs:dateTime: " + t, e);
        }
    }

    @Override
    public String marshal(OffsetDateTime value) {
        return value == null ? null : DateTimeFormatter.ISO_OFFSET_DATE_TIME.format(value);
    }
}
