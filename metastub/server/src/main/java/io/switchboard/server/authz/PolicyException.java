package io.switchboard.server.authz;

/**
 * An authorization policy that cannot be used: its JSON does not parse, or it breaks the policy's
 * form (a missing name, no allow rules, an unknown field, a header match). Says where: the
 * line and column in the file, and why. API.
 *
 * <pre>{@code
 * try {
 *     AuthorizationPolicy.read(Path.of("authz.json"));
 * } catch (PolicyException e) {
 *     System.err.println("authz.json:" + e.line() + ": " + e.reason());
 * }
 * }</pre>
 */
public class PolicyException extends IllegalArgumentException {
    private final int line;
    private final int column;
    private final String reason;

    public PolicyException(int line, int column, String reason) {
        super(line > 0 ? "line " + line + (column > 0 ? ", column " + column : "") + ": " + reason : reason);
        this.line = line;
        this.column = column;
        this.reason = reason;
    }

    /** The line (from 1) where the policy went wrong; 0 when not known (an empty file, a read error). */
    public int line() {
        return line;
    }

    /** The column (from 1) on that line; 0 when not known. */
    public int column() {
        return column;
    }

    /** Why the policy was refused, without the position. */
    public String reason() {
        return reason;
    }
}
