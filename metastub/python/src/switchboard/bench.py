"""The small call from Python, per way of making it, in one run: ``double[10]`` echoed by a component
(the Java echo component, say) over tcp (TCP), tcp over the server's Unix socket, gRPC, the
``adaptive`` policy choosing, and a plain grpcio stub with no Switchboard around it. The cases take
turns call by call in a new order each round, so that the machine's load falls on all alike; the table gives each one's
median and 10th percentile in microseconds and its ratio to this client's own gRPC call::

    python -m switchboard.bench --registry http://127.0.0.1:8081/axis2/services/Registry --name Echo

The targets (docs/python.md): tcp at most 0.35x gRPC's median, the Unix socket lower still, and
``adaptive`` within 1.1x of the better pinned tcp case. The exit code is 0 when they are met, 1
when not, 2 when a case could not run."""

import argparse
import json
import random
import statistics
import sys
import time
from urllib.parse import urlparse

import switchboard

VALUES = [1.5, -0.0, 2.25, 1e-310, -3.75, 4.0, 0.1, 1e300, -7.5, 8.125]   # double[10]
TCP_TARGET, ADAPTIVE_TARGET = 0.35, 1.1


def percentile(samples, p):
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(len(ordered) * p))]


def cases(registry, name):
    """{case: a function making one call} and what to close afterwards."""
    import grpc

    over_tcp = switchboard.connect(registry, watch=False, unix_sockets=False)
    same_host = switchboard.connect(registry, watch=False)
    tcp_stub, unix_stub = over_tcp.lookup(name), same_host.lookup(name)
    adaptive_stub = switchboard.connect(registry, watch=False).lookup(name)
    grpc_stub = over_tcp.lookup(name)
    boards = [over_tcp, same_host, adaptive_stub._board]
    grpc_address = tcp_stub.entries[0].endpoint("grpc")
    url = urlparse(grpc_address)
    channel = grpc.insecure_channel("%s:%d" % (url.hostname, url.port))
    op = tcp_stub.iface.operations["echoDoubles"]
    plain = channel.unary_unary(op.path, request_serializer=op.request.SerializeToString,
                                response_deserializer=op.response.FromString)
    request = op.request(values=VALUES)
    run = {
        "tcp": lambda: tcp_stub.echoDoubles(values=VALUES, protocol="tcp"),
        "tcp-unix": lambda: unix_stub.echoDoubles(values=VALUES, protocol="tcp"),
        "grpc": lambda: grpc_stub.echoDoubles(values=VALUES, protocol="grpc"),
        "adaptive": lambda: adaptive_stub.echoDoubles(values=VALUES),
        "grpcio": lambda: list(plain(request, timeout=30).values),
    }
    return run, {"tcp": tcp_stub, "tcp-unix": unix_stub, "adaptive": adaptive_stub}, boards + [channel]


def measure(run, reps, warmup):
    names = list(run)
    samples = {n: [] for n in names}
    shuffled = random.Random(41)
    for i in range(warmup + reps):
        # a new order each round: a case must not always follow the same one (a gRPC call leaves
        # grpcio's threads busy for a while, and the call after it pays for that)
        order = list(names)
        shuffled.shuffle(order)
        for n in order:
            started = time.perf_counter()
            answer = run[n]()
            took = time.perf_counter() - started
            if list(answer) != VALUES:
                raise AssertionError("%s answered %r" % (n, answer))
            if i >= warmup:
                samples[n].append(took * 1e6)
    return samples


def report(samples, vias):
    grpc_median = statistics.median(samples["grpc"])
    rows = {}
    for n, s in samples.items():
        rows[n] = {"median_us": round(statistics.median(s), 1), "p10_us": round(percentile(s, 0.10), 1),
                   "x_grpc": round(statistics.median(s) / grpc_median, 3), "calls": len(s)}
        if n in vias:
            rows[n]["via"] = vias[n]
    best_pinned = min(rows["tcp"]["median_us"], rows["tcp-unix"]["median_us"])
    targets = {
        "tcp <= %.2fx grpc" % TCP_TARGET: rows["tcp"]["x_grpc"] <= TCP_TARGET,
        "tcp-unix < tcp": rows["tcp-unix"]["median_us"] < rows["tcp"]["median_us"],
        "adaptive <= %.1fx the better pinned" % ADAPTIVE_TARGET: rows["adaptive"]["median_us"]
        <= ADAPTIVE_TARGET * best_pinned,
    }
    return rows, targets


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m switchboard.bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--registry", required=True, help="the registry's URL")
    parser.add_argument("--name", default="Echo", help="the echo component's name in the registry (default Echo)")
    parser.add_argument("--reps", type=int, default=2000, help="timed calls per case (default 2000)")
    parser.add_argument("--warmup", type=int, default=300, help="untimed calls per case first (default 300)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args(argv)
    try:
        run, stubs, closing = cases(args.registry, args.name)
        samples = measure(run, args.reps, args.warmup)
    except Exception as e:   # noqa: BLE001 - a case that cannot run ends the bench with its reason
        print("switchboard.bench: %s: %s" % (type(e).__name__, e), file=sys.stderr)
        return 2
    vias = {n: "%s over %s" % (s.last_call.protocol, s.last_call.via) for n, s in stubs.items()}
    rows, targets = report(samples, vias)
    for c in closing:
        c.close()
    if args.json:
        print(json.dumps({"rows": rows, "targets": targets}, indent=1))
    else:
        print("%-10s %10s %10s %8s  %s" % ("case", "median µs", "p10 µs", "÷ grpc", "via"))
        for n, r in rows.items():
            print("%-10s %10.1f %10.1f %8.3f  %s" % (n, r["median_us"], r["p10_us"], r["x_grpc"], r.get("via", "")))
        for what, met in targets.items():
            print("%-40s %s" % (what, "met" if met else "NOT MET"))
    return 0 if all(targets.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
