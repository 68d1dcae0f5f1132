"""gRPC server reflection (``grpc.reflection.v1.ServerReflection``), the requests tools such as
grpcurl send: list the services, and the component's file descriptor by file name or by symbol.
The messages are few and flat, so they are read and written here field by field."""

from ._wire import read_varint, varint


def _fields(data):
    """(number, wire type, value) of a message's fields; strings and messages as bytes."""
    i = 0
    while i < len(data):
        key, i = read_varint(data, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = read_varint(data, i)
        elif wire == 2:
            n, i = read_varint(data, i)
            if i + n > len(data):
                raise ValueError("truncated field")
            value, i = data[i:i + n], i + n
        elif wire == 1:
            value, i = data[i:i + 8], i + 8
        elif wire == 5:
            value, i = data[i:i + 4], i + 4
        else:
            raise ValueError("unknown wire type %d" % wire)
        yield number, wire, value


def _bytes_field(number, data):
    return varint(number << 3 | 2) + varint(len(data)) + data


def answer(request, iface):
    """The ServerReflectionResponse (bytes) to one ServerReflectionRequest (bytes)."""
    host, kind, arg = b"", None, None
    try:
        for number, wire, value in _fields(request):
            if number == 1 and wire == 2:
                host = value
            elif number in (3, 4, 5, 6, 7) and wire == 2:
                kind, arg = number, value
    except ValueError as e:
        return _error(host, request, 3, "malformed request: %s" % e)
    served = {f.name: f for f in list(iface.file_set.file) + [iface.health]}
    if kind == 7:   # list_services
        services = [iface.service.full_name, "grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection"]
        body = b"".join(_bytes_field(1, _bytes_field(1, s.encode())) for s in services)
        return _bytes_field(1, host) + _bytes_field(2, request) + _bytes_field(6, body)
    if kind == 3:   # file_by_filename
        name = arg.decode("utf-8", "replace")
        if name in served:
            return _files(host, request, _with_dependencies(name, served))
        return _error(host, request, 5, "no file " + name)
    if kind == 4:   # file_containing_symbol
        symbol = arg.decode("utf-8", "replace")
        try:
            name = iface.pool.FindFileContainingSymbol(symbol).name
        except KeyError:
            name = None
        if name not in served:
            return _error(host, request, 5, "no symbol " + symbol)
        return _files(host, request, _with_dependencies(name, served))
    return _error(host, request, 12, "not implemented")


def _with_dependencies(name, served):
    """The serialized file and those it imports (the ones served here), the file first."""
    out, todo, seen = [], [name], set()
    while todo:
        n = todo.pop(0)
        if n in seen or n not in served:
            continue
        seen.add(n)
        out.append(served[n].SerializeToString())
        todo.extend(served[n].dependency)
    return out


def _files(host, request, files):
    body = b"".join(_bytes_field(1, f) for f in files)
    return _bytes_field(1, host) + _bytes_field(2, request) + _bytes_field(4, body)


def _error(host, request, code, message):
    body = varint(1 << 3) + varint(code) + _bytes_field(2, message.encode("utf-8"))
    return _bytes_field(1, host) + _bytes_field(2, request) + _bytes_field(7, body)
