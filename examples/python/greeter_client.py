#!/usr/bin/env python3
"""Calls Greeter knowing only the registry's address, the Java component or the Python one alike:
the package reads the component's endpoints and interface from the registry.

    python greeter_client.py http://127.0.0.1:8081/axis2/services/Registry Ada      # Hello, Ada!
"""

import sys

import switchboard


def main(registry, name="world"):
    with switchboard.connect(registry) as board:
        greeter = board.lookup("Greeter")
        print(greeter.greet(name=name))
        print("average of 1.5 and 2.5: %s (over %s)" % (greeter.average(values=[1.5, 2.5]), greeter.last_call.protocol))
    return 0


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: greeter_client.py REGISTRY_URL [NAME]")
    sys.exit(main(*sys.argv[1:]))
