package io.switchboard.protocol.tcp;

import io.switchboard.codec.message.MessageLimits;
import io.switchboard.codec.message.WireFormatException;
import io.switchboard.codec.proto.ProtoInput;
import io.switchboard.codec.proto.ProtoOutput;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The {@code RpcMeta} of a {@code baidu_std} frame, the fields of brpc's
 * {@code src/brpc/policy/baidu_rpc_meta.proto} that Switchboard reads and writes, encoded by hand
 * with the protobuf primitives the generated codecs use (no generated classes, nothing reflected):
 *
 * <pre>
 * message RpcMeta {
 *     optional RpcRequestMeta request = 1;
 *     optional RpcResponseMeta response = 2;
 *     optional int32 compress_type = 3;          // 0 none, 1 snappy, 2 gzip, 3 zlib (TcpCompression)
 *     optional int64 correlation_id = 4;
 *     optional int32 attachment_size = 5;        // read; a server refuses a request with one
 *     optional bytes authentication_data = 7;    // a bearer token
 *     map&lt;string, string&gt; user_fields = 9;
 * }
 * message RpcRequestMeta {
 *     required string service_name = 1;
 *     required string method_name = 2;
 *     optional int64 log_id = 3;
 *     optional string request_id = 7;            // Switchboard's call id
 *     optional int32 timeout_ms = 8;
 * }
 * message RpcResponseMeta {
 *     optional int32 error_code = 1;
 *     optional string error_text = 2;
 * }
 * </pre>
 *
 * Other fields (trace ids, chunk info, stream settings) are skipped on
 * reading, as protobuf skips unknown fields. A request has {@link #service} set; a response does not.
 *
 * @param service        the request's {@code service_name}, or null in a response
 * @param method         the request's {@code method_name}
 * @param logId          {@code log_id}, 0 when absent
 * @param requestId      {@code request_id}: the call id de-duplication uses; null when absent
 * @param timeoutMillis  {@code timeout_ms}: 0 when absent
 * @param errorCode      the response's {@code error_code}: 0 for success
 * @param errorText      the response's {@code error_text}, or null
 * @param correlationId  matches a response to its request
 * @param compressType   {@code compress_type}: how the message is compressed ({@link TcpCompression}); 0: not
 * @param attachmentSize {@code attachment_size}: the bytes after the message that are an attachment; Switchboard
 *                       writes 0, and its server refuses a request with an attachment
 * @param userFields     {@code user_fields}: the trace context and Switchboard's extensions ({@link TcpErrors})
 * @param authentication {@code authentication_data} (field 7): the caller's bearer token; null when absent
 */
record RpcMeta(String service, String method, long logId, String requestId, int timeoutMillis, int errorCode,
               String errorText, long correlationId, int compressType, int attachmentSize,
               Map<String, String> userFields, String authentication) {
    /** The most user fields a frame may carry. */
    static final int MAX_USER_FIELDS = 64;

    static RpcMeta request(String service, String method, String requestId, int timeoutMillis, long correlationId,
                           Map<String, String> userFields) {
        return request(service, method, requestId, timeoutMillis, correlationId, userFields, null);
    }

    /** A request carrying the bearer token {@code authentication} (null: none). */
    static RpcMeta request(String service, String method, String requestId, int timeoutMillis, long correlationId,
                           Map<String, String> userFields, String authentication) {
        return new RpcMeta(service, method, 0, requestId, timeoutMillis, 0, null, correlationId, 0, 0, userFields,
                authentication);
    }

    static RpcMeta response(long correlationId, int errorCode, String errorText, Map<String, String> userFields) {
        return new RpcMeta(null, null, 0, null, 0, errorCode, errorText, correlationId, 0, 0, userFields, null);
    }

    /** This meta with {@code compress_type} set: an answer in the compression of its request. */
    RpcMeta withCompressType(int type) {
        return new RpcMeta(service, method, logId, requestId, timeoutMillis, errorCode, errorText, correlationId, type,
                attachmentSize, userFields, authentication);
    }

    /** This meta with one more user field. */
    RpcMeta withUserField(String key, String value) {
        Map<String, String> fields = userFields == null ? new java.util.HashMap<>(2) : new java.util.HashMap<>(userFields);
        fields.put(key, value);
        return new RpcMeta(service, method, logId, requestId, timeoutMillis, errorCode, errorText, correlationId,
                compressType, attachmentSize, fields, authentication);
    }

    boolean isRequest() {
        return service != null;
    }

    String userField(String key) {
        return userFields == null ? null : userFields.get(key);
    }

    /** The protobuf encoding of this meta. */
    byte[] encode() {
        if (service != null) {
            byte[] names = names(service, method);
            ProtoOutput out = new ProtoOutput(requestBytes(names, logId, requestId, timeoutMillis, correlationId, userFields,
                    authentication));
            writeRequest(out, names, logId, requestId, timeoutMillis, correlationId, userFields, authentication);
            writeSizes(out);
            return out.toByteArray();
        }
        int inner = (errorCode != 0 ? 1 + ProtoOutput.varint64Size(errorCode) : 0)
                + (errorText != null ? stringField(errorText) : 0);
        ProtoOutput out = new ProtoOutput(1 + ProtoOutput.varint32Size(inner) + inner
                + 1 + ProtoOutput.varint64Size(correlationId) + userBytes(userFields));
        out.writeLengthDelimited(2, inner);
        if (errorCode != 0) {
            out.writeInt32(1, errorCode);
        }
        if (errorText != null) {
            out.writeString(2, errorText);
        }
        out.writeInt64(4, correlationId);
        writeUserFields(out, userFields);
        writeSizes(out);
        return out.toByteArray();
    }

    /** {@code compress_type} and {@code attachment_size}, when set (field order does not matter to protobuf). */
    private void writeSizes(ProtoOutput out) {
        if (compressType != 0) {
            out.writeInt32(3, compressType);
        }
        if (attachmentSize != 0) {
            out.writeInt32(5, attachmentSize);
        }
    }

    /** A request's {@code service_name} and {@code method_name} fields, encoded once per operation by a client. */
    static byte[] names(String service, String method) {
        ProtoOutput out = new ProtoOutput(stringField(service) + stringField(method));
        out.writeString(1, service);
        out.writeString(2, method);
        return out.toByteArray();
    }

    /** The bytes {@link #writeRequest} writes. */
    static int requestBytes(byte[] names, long logId, String requestId, int timeoutMillis, long correlationId,
                            Map<String, String> userFields, String authentication) {
        int inner = requestMetaBytes(names, logId, requestId, timeoutMillis);
        return 1 + ProtoOutput.varint32Size(inner) + inner + 1 + ProtoOutput.varint64Size(correlationId)
                + userBytes(userFields) + (authentication != null ? stringField(authentication) : 0);
    }

    /** A request's meta, its names encoded before ({@link #names}): what a request's {@link #encode()} gives. */
    static void writeRequest(ProtoOutput out, byte[] names, long logId, String requestId, int timeoutMillis,
                             long correlationId, Map<String, String> userFields, String authentication) {
        out.writeLengthDelimited(1, requestMetaBytes(names, logId, requestId, timeoutMillis));
        out.writeRaw(names, 0, names.length);
        if (logId != 0) {
            out.writeInt64(3, logId);
        }
        if (requestId != null) {
            out.writeString(7, requestId);
        }
        if (timeoutMillis != 0) {
            out.writeInt32(8, timeoutMillis);
        }
        out.writeInt64(4, correlationId);
        if (authentication != null) {
            out.writeString(7, authentication);   // bytes on brpc's side; a token is ASCII
        }
        writeUserFields(out, userFields);
    }

    /** The nested {@code RpcRequestMeta}'s bytes. */
    private static int requestMetaBytes(byte[] names, long logId, String requestId, int timeoutMillis) {
        return names.length
                + (logId != 0 ? 1 + ProtoOutput.varint64Size(logId) : 0)
                + (requestId != null ? stringField(requestId) : 0)
                + (timeoutMillis != 0 ? 1 + ProtoOutput.varint64Size(timeoutMillis) : 0);
    }

    private static int userBytes(Map<String, String> userFields) {
        int n = 0;
        if (userFields != null) {
            for (Map.Entry<String, String> e : userFields.entrySet()) {
                int entry = stringField(e.getKey()) + stringField(e.getValue());
                n += 1 + ProtoOutput.varint32Size(entry) + entry;
            }
        }
        return n;
    }

    /** Each user field as a map entry message, written in place. */
    private static void writeUserFields(ProtoOutput out, Map<String, String> userFields) {
        if (userFields != null) {
            for (Map.Entry<String, String> e : userFields.entrySet()) {
                out.writeLengthDelimited(9, stringField(e.getKey()) + stringField(e.getValue()));
                out.writeString(1, e.getKey());
                out.writeString(2, e.getValue());
            }
        }
    }

    /** The bytes of a string field (number below 16) holding {@code s}. */
    private static int stringField(String s) {
        int n = utf8Length(s);
        return 1 + ProtoOutput.varint32Size(n) + n;
    }

    /**
     * Reads a meta of {@code length} bytes from {@code source}.
     *
     * @throws WireFormatException when it is malformed: a broken field, a request without its
     *                             names, too many user fields. A compression or an attachment is read,
     *                             not judged: the server answers a request it cannot take on an open connection
     */
    static RpcMeta decode(ProtoInput in) {
        return decode(in, null, null);
    }

    /**
     * Decodes a meta; {@code knownService} and {@code knownMethod} (null: none), the names of the
     * connection's last request, are taken again rather than copied when this request names the same.
     */
    static RpcMeta decode(ProtoInput in, String knownService, String knownMethod) {
        String service = null;
        String method = null;
        long logId = 0;
        String requestId = null;
        int timeout = 0;
        int errorCode = 0;
        String errorText = null;
        long correlationId = 0;
        int compress = 0;
        int attachment = 0;
        String authentication = null;
        boolean request = false;
        Map<String, String> user = null;
        for (int tag = in.readTag(); tag != 0; tag = in.readTag()) {
            switch (tag) {
                case (1 << 3) | ProtoOutput.LENGTH_DELIMITED -> {
                    request = true;
                    int outer = in.beginMessage(in.readLength());
                    for (int t = in.readTag(); t != 0; t = in.readTag()) {
                        switch (t) {
                            case (1 << 3) | ProtoOutput.LENGTH_DELIMITED -> service = in.readString(knownService);
                            case (2 << 3) | ProtoOutput.LENGTH_DELIMITED -> method = in.readString(knownMethod);
                            case (3 << 3) | ProtoOutput.VARINT -> logId = in.readVarint64();
                            case (7 << 3) | ProtoOutput.LENGTH_DELIMITED -> requestId = in.readString();
                            case (8 << 3) | ProtoOutput.VARINT -> timeout = in.readVarint32();
                            default -> in.skipField(t);
                        }
                    }
                    in.endMessage(outer);
                }
                case (2 << 3) | ProtoOutput.LENGTH_DELIMITED -> {
                    int outer = in.beginMessage(in.readLength());
                    for (int t = in.readTag(); t != 0; t = in.readTag()) {
                        switch (t) {
                            case (1 << 3) | ProtoOutput.VARINT -> errorCode = in.readVarint32();
                            case (2 << 3) | ProtoOutput.LENGTH_DELIMITED -> errorText = in.readString();
                            default -> in.skipField(t);
                        }
                    }
                    in.endMessage(outer);
                }
                case (3 << 3) | ProtoOutput.VARINT -> compress = in.readVarint32();
                case (4 << 3) | ProtoOutput.VARINT -> correlationId = in.readVarint64();
                case (5 << 3) | ProtoOutput.VARINT -> attachment = in.readVarint32();
                case (7 << 3) | ProtoOutput.LENGTH_DELIMITED -> authentication = in.readString();
                case (9 << 3) | ProtoOutput.LENGTH_DELIMITED -> {
                    if (user == null) {
                        user = new LinkedHashMap<>();
                    }
                    int outer = in.beginMessage(in.readLength());
                    String key = "";
                    String value = "";
                    for (int t = in.readTag(); t != 0; t = in.readTag()) {
                        switch (t) {
                            case (1 << 3) | ProtoOutput.LENGTH_DELIMITED -> key = in.readString();
                            case (2 << 3) | ProtoOutput.LENGTH_DELIMITED -> value = in.readString();
                            default -> in.skipField(t);
                        }
                    }
                    in.endMessage(outer);
                    user.put(key, value);
                    if (user.size() > MAX_USER_FIELDS) {
                        throw WireFormatException.malformed("RpcMeta.user_fields", "more than " + MAX_USER_FIELDS + " user fields");
                    }
                }
                default -> in.skipField(tag);
            }
        }
        if (request && (service == null || method == null)) {
            throw WireFormatException.malformed("RpcRequestMeta", "a request needs its service_name and method_name");
        }
        return new RpcMeta(request ? service : null, method, logId, requestId, timeout, errorCode, errorText,
                correlationId, compress, attachment, user, request ? authentication : null);
    }

    /** Limits for reading a meta: its strings are short. */
    static MessageLimits limits(int maxMetaBytes) {
        return new MessageLimits(maxMetaBytes, 0, maxMetaBytes);
    }

    static int utf8Length(String s) {
        int n = s.length();
        for (int i = 0; i < s.length(); i++) {
            if (s.charAt(i) >= 0x80) {
                return s.getBytes(StandardCharsets.UTF_8).length;
            }
        }
        return n;
    }
}
