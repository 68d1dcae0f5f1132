package io.switchboard.idl.runtime;

import java.time.DateTimeException;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;

/**
 * The values a field's schema type can hold, the same for every protocol so that a value's fate
 * never depends on the protocol a call takes: writers refuse anything else before a byte is sent,
 * and readers refuse it on arrival.
 * <ul>
 *   <li>{@code xs:string}: any text XML 1.0 can carry; no lone surrogate, no control character
 *       other than tab, line feed and carriage return, no U+FFFE or U+FFFF;</li>
 *   <li>{@code xs:dateTime}: years 1 to 9999, an offset of whole minutes within ±14:00 (what the
 *       lexical form {@code 2026-11-22T10:15:30.5+05:30} can say), nanosecond precision.</li>
 * </ul>
 */
public final class XsdValues {
    /** The largest offset {@code xs:dateTime} allows. */
    private static final int MAX_OFFSET_SECONDS = 14 * 3600;

    private XsdValues() {
    }

    /** Null when {@code s} is a valid {@code xs:string}; otherwise what is wrong, with the index. */
    public static String stringProblem(CharSequence s) {
        for (int i = 0, n = s.length(); i < n; i++) {
            char c = s.charAt(i);
            if (c >= 0x20 && c < 0xD800) {
                continue;   // the common case: one comparison pair per character
            }
            String problem = charProblem(s, i, c);
            if (problem != null) {
                return problem;
            }
            if (Character.isHighSurrogate(c)) {
                i++;   // its low surrogate, checked by charProblem
            }
        }
        return null;
    }

    private static String charProblem(CharSequence s, int i, char c) {
        if (c < 0x20) {
            return c == '\t' || c == '\n' || c == '\r' ? null
                    : String.format("control character U+%04X at index %d, which XML 1.0 cannot carry", (int) c, i);
        }
        if (Character.isHighSurrogate(c)) {
            return i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1)) ? null
                    : String.format("lone surrogate U+%04X at index %d", (int) c, i);
        }
        if (Character.isLowSurrogate(c)) {
            return String.format("lone surrogate U+%04X at index %d", (int) c, i);
        }
        if (c == 0xFFFE || c == 0xFFFF) {
            return String.format("non-character U+%04X at index %d, which XML 1.0 cannot carry", (int) c, i);
        }
        return null;
    }

    /** Null when {@code v} fits {@code xs:dateTime} as Switchboard writes it; otherwise why not. */
    public static String dateTimeProblem(OffsetDateTime v) {
        int year = v.getYear();
        if (year < 1 || year > 9999) {
            return "year " + year + " is outside 1 to 9999, which an xs:dateTime of four year digits can say";
        }
        int offset = v.getOffset().getTotalSeconds();
        if (offset % 60 != 0) {
            return "offset " + v.getOffset() + " has seconds; xs:dateTime offsets are whole minutes";
        }
        if (Math.abs(offset) > MAX_OFFSET_SECONDS) {
            return "offset " + v.getOffset() + " is beyond ±14:00, the range of xs:dateTime";
        }
        return null;
    }

    /**
     * Reads the lexical form of an {@code xs:dateTime} strictly:
     * {@code YYYY-MM-DDThh:mm:ss(.f{1,9})?(Z|±hh:mm)?}, surrounding whitespace allowed; without an
     * offset the value is read as UTC.
     *
     * @throws IllegalArgumentException anything else, with the reason
     */
    public static OffsetDateTime parseDateTime(String text) {
        String t = text.strip();
        int n = t.length();
        // fixed positions up to the seconds: 2026-11-22T10:15:30
        if (n < 19 || !digits(t, 0, 4) || t.charAt(4) != '-' || !digits(t, 5, 2) || t.charAt(7) != '-'
                || !digits(t, 8, 2) || t.charAt(10) != 'T' || !digits(t, 11, 2) || t.charAt(13) != ':'
                || !digits(t, 14, 2) || t.charAt(16) != ':' || !digits(t, 17, 2)) {
            throw new IllegalArgumentException("not an xs:dateTime of the form 2026-11-22T10:15:30(.5)(Z|+05:30)");
        }
        int at = 19;
        int nanos = 0;
        if (at < n && t.charAt(at) == '.') {
            int start = ++at;
            while (at < n && isDigit(t.charAt(at))) {
                at++;
            }
            int digits = at - start;
            if (digits == 0 || digits > 9) {
                throw new IllegalArgumentException(digits == 0 ? "a '.' without fraction digits"
                        : "more than 9 fraction digits, finer than a nanosecond");
            }
            nanos = Integer.parseInt(t.substring(start, at)) * (int) Math.pow(10, 9 - digits);
        }
        ZoneOffset offset = ZoneOffset.UTC;
        if (at < n) {
            char c = t.charAt(at);
            if (c == 'Z' && at + 1 == n) {
                at++;
            } else if ((c == '+' || c == '-') && at + 6 == n && digits(t, at + 1, 2) && t.charAt(at + 3) == ':'
                    && digits(t, at + 4, 2)) {
                int hours = Integer.parseInt(t.substring(at + 1, at + 3));
                int minutes = Integer.parseInt(t.substring(at + 4, at + 6));
                int seconds = hours * 3600 + minutes * 60;
                if (minutes > 59 || seconds > MAX_OFFSET_SECONDS) {
                    throw new IllegalArgumentException("offset " + t.substring(at) + " is beyond ±14:00");
                }
                offset = ZoneOffset.ofTotalSeconds(c == '-' ? -seconds : seconds);
                at = n;
            } else {
                throw new IllegalArgumentException("'" + t.substring(at) + "' is not an offset (Z or ±hh:mm)");
            }
        }
        int year = Integer.parseInt(t.substring(0, 4));
        if (year < 1) {
            throw new IllegalArgumentException("year 0000 does not exist in xs:dateTime");
        }
        try {
            return OffsetDateTime.of(LocalDateTime.of(year, Integer.parseInt(t.substring(5, 7)),
                    Integer.parseInt(t.substring(8, 10)), Integer.parseInt(t.substring(11, 13)),
                    Integer.parseInt(t.substring(14, 16)), Integer.parseInt(t.substring(17, 19)), nanos), offset);
        } catch (DateTimeException e) {
            throw new IllegalArgumentException(e.getMessage(), e);
        }
    }

    private static boolean digits(String t, int from, int count) {
        for (int i = from; i < from + count; i++) {
            if (!isDigit(t.charAt(i))) {
                return false;
            }
        }
        return true;
    }

    private static boolean isDigit(char c) {
        return c >= '0' && c <= '9';
    }
}
