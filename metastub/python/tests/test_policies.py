"""The selection policies alone, as the Java ones behave (no network)."""

import pytest

from switchboard import NoCommonProtocol, policies
from switchboard._client import CallRecord


class Call:
    def __init__(self, estimated, expected_response=0, suite=("grpc", "soap"), operation="empty"):
        self.estimated_bytes, self.expected_response_bytes, self.suite_candidates = estimated, expected_response, suite
        self.operation = operation

    def address(self, protocol):
        return protocol + "://server"


def test_size_takes_soap_up_to_the_threshold_counting_the_expected_response():
    size = policies.by_name("size")
    assert size.name == "size" and size.select(Call(800), ["grpc", "soap"]) == "soap"
    assert size.select(Call(801), ["grpc", "soap"]) == "grpc"
    assert size.select(Call(500, expected_response=400), ["grpc", "soap"]) == "grpc"
    assert policies.by_name("size:4096").name == "size:4096"
    assert policies.by_name("size:4096").select(Call(4000), ["grpc", "soap"]) == "soap"
    assert size.select(Call(10_000), ["soap"]) == "soap"


def test_fixed_falls_to_soap_only_while_its_protocol_is_in_back_off():
    fixed = policies.by_name("fixed:grpc")
    assert fixed.select(Call(10), ["grpc", "soap"]) == "grpc"
    assert fixed.select(Call(10), ["soap"]) == "soap"   # grpc in back-off
    with pytest.raises(NoCommonProtocol, match="grpc is the fixed protocol but not among the candidates"):
        fixed.select(Call(10, suite=("soap",)), ["soap"])


def test_first_common_and_bad_names():
    assert policies.by_name("first-common").select(Call(10), ["grpc", "soap"]) == "grpc"
    for bad, message in [("fastest", "unknown selection policy 'fastest'"), ("fixed", "fixed needs a protocol"),
                         ("size:big", "threshold must be a number of bytes"),
                         ("adaptive:1", "takes no argument")]:
        with pytest.raises(ValueError, match=message):
            policies.by_name(bad)


def test_adaptive_starts_from_the_java_priors_and_learns_from_the_calls():
    now = [0.0]
    adaptive = policies.Adaptive(clock=lambda: now[0])
    assert adaptive.predict_micros("soap", "soap://server", "empty", 1000) == pytest.approx(600 + 0.08 * 1000)
    assert adaptive.predict_micros("grpc", "grpc://server", "empty", 1000) == pytest.approx(400 + 0.004 * 1000)
    assert adaptive.select(Call(100), ["grpc", "soap"]) == "grpc"
    # small gRPC calls that take 5 ms: its fixed cost moves up toward them, and SOAP wins small calls
    for _ in range(200):
        adaptive.observe(CallRecord("Echo", "empty", "id", "grpc", "grpc://server", "r", 10, 0.005, None, 10))
    assert adaptive.predict_micros("grpc", "grpc://server", "empty", 20) > 1000
    picks = {adaptive.select(Call(10), ["grpc", "soap"]) for _ in range(5)}
    assert picks == {"soap"}
    # failed calls teach nothing
    before = adaptive.predict_micros("soap", "soap://server", "empty", 20)
    adaptive.observe(CallRecord("Echo", "empty", "id", "soap", "soap://server", "r", 10, 9.0, "TransportError", -1))
    assert adaptive.predict_micros("soap", "soap://server", "empty", 20) == before


def test_an_operation_that_computes_for_milliseconds_does_not_send_anothers_small_calls_elsewhere():
    # a model per operation, as the Java policy: divide's 20 ms of computation over gRPC says
    # nothing of what gRPC costs the echo's small calls
    adaptive = policies.Adaptive(clock=lambda: 0.0)
    for _ in range(200):
        adaptive.observe(CallRecord("Echo", "divide", "id", "grpc", "grpc://server", "r", 10, 0.020, None, 10))
    assert adaptive.predict_micros("grpc", "grpc://server", "divide", 20) > 10_000
    picks = {adaptive.select(Call(10, operation="echoDoubles"), ["grpc", "soap"]) for _ in range(3 * adaptive.EXPLORE_EVERY)}
    assert picks == {"grpc"}


def test_adaptive_never_tries_a_runner_up_five_times_slower_even_by_microseconds():
    now = [0.0]
    adaptive = policies.Adaptive(clock=lambda: now[0])
    for _ in range(200):   # 25 µs over gRPC, 125 µs over SOAP: not close, though 100 µs apart
        adaptive.observe(CallRecord("Echo", "empty", "id", "grpc", "grpc://server", "r", 10, 25e-6, None, 10))
        adaptive.observe(CallRecord("Echo", "empty", "id", "soap", "soap://server", "r", 10, 125e-6, None, 10))
    picks = [adaptive.select(Call(10), ["grpc", "soap"]) for _ in range(10 * adaptive.EXPLORE_EVERY)]
    assert picks.count("soap") == 0


def test_a_reprobe_far_faster_than_its_model_is_believed_at_once():
    """As the Java policy: a protocol whose model rose during a slow spell (the JIT compiling its
    path) gets the operation back from one re-probe that comes in at a quarter of what its model says."""
    now = [0.0]
    adaptive = policies.Adaptive(clock=lambda: now[0])
    large = 160_000
    for _ in range(400):   # 120 ms over gRPC while it was slow, 40 ms over SOAP
        adaptive.observe(CallRecord("Echo", "echoDoubles", "id", "soap", "soap://server", "r", large, 0.040, None, 10))
        adaptive.observe(CallRecord("Echo", "echoDoubles", "id", "grpc", "grpc://server", "r", large, 0.120, None, 10))
    call = Call(large, operation="echoDoubles")
    assert adaptive.select(call, ["grpc", "soap"]) == "soap"
    now[0] += adaptive.REPROBE_SECONDS + 1
    picks = [adaptive.select(call, ["grpc", "soap"]) for _ in range(adaptive.REPROBE_CHECK_EVERY)]
    assert picks.count("grpc") == 1, "re-probed once: %s" % picks
    adaptive.observe(CallRecord("Echo", "echoDoubles", "id", "grpc", "grpc://server", "r", large, 0.005, None, 10))
    picks = [adaptive.select(call, ["grpc", "soap"]) for _ in range(adaptive.EXPLORE_EVERY)]
    assert picks.count("grpc") >= adaptive.EXPLORE_EVERY - 1, picks
