#!/usr/bin/env python3
"""The Greeter component in Python: served over gRPC and SOAP and bound in a registry, until SIGTERM
or Ctrl-C (it unbinds itself on the way out). Any client calls it as it would the Java one.

    mvn -B package            # once: derives the .proto and WSDL it serves from src/main/xsd/greeter.xsd
                              # (or, without Maven: switchboard compile src/main/xsd/greeter.xsd)
    python greeter_component.py http://127.0.0.1:8081/axis2/services/Registry [--secret-file FILE]
"""

import argparse
import os
import sys

import switchboard

SCHEMA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "src", "main", "xsd", "greeter.xsd")


class Greeter:
    """What greeter.xsd declares: one method per operation, parameters by the schema's names."""

    def greet(self, name):
        return "Hello, %s!" % (name.strip() if name and name.strip() else "stranger")

    def average(self, values):
        return sum(values) / len(values) if values else float("nan")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("registry", help="the registry's address")
    p.add_argument("--secret-file", help="the registry's shared secret, if it has one")
    args = p.parse_args()
    secret = None
    if args.secret_file:
        with open(args.secret_file, encoding="utf-8") as f:
            secret = f.read().strip()
    try:
        server = switchboard.serve(Greeter(), schema=SCHEMA, registry=args.registry, secret=secret)
    except (switchboard.SwitchboardError, OSError) as e:
        print("greeter_component: %s" % e, file=sys.stderr, flush=True)
        return 2
    print("serving %s at %s" % (server.name, " ".join(server.endpoints.values())), flush=True)
    try:
        server.wait()
    except KeyboardInterrupt:
        pass
    server.close()
    print("stopped", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
