"""The authorization policy reader and its decisions (switchboard.authz), on the example of gRPC's
SDK authorization policy documentation (gRFC A43), on anonymous callers, on malformed policies
(each refused with where and why) and on a policy file changed under a running server's reader."""

import json
import logging
import os

import pytest

from switchboard.authz import FilePolicy, Policy, PolicyError

# gRFC A43's example: two admins may call anything of pkg.service, any authenticated caller foo
# and bar, nobody */secret
A43_EXAMPLE = {
    "name": "example-policy",
    "allow_rules": [
        {"name": "admin-access", "source": {"principals": ["spiffe://foo.com/sa/admin1", "spiffe://foo.com/sa/admin2"]},
         "request": {"paths": ["/pkg.service/*"]}},
        {"name": "dev-access", "source": {"principals": ["*"]},
         "request": {"paths": ["/pkg.service/foo", "/pkg.service/bar"]}},
    ],
    "deny_rules": [{"name": "deny-access", "request": {"paths": ["*/secret"]}}],
}


@pytest.mark.parametrize("principal, path, allowed, rule", [
    ("spiffe://foo.com/sa/admin1", "/pkg.service/anything", True, "admin-access"),
    ("spiffe://foo.com/sa/admin2", "/pkg.service/foo", True, "admin-access"),
    ("spiffe://foo.com/sa/admin1", "/pkg.service/secret", False, "deny-access"),   # deny rules first
    ("spiffe://foo.com/sa/dev", "/pkg.service/bar", True, "dev-access"),
    ("spiffe://foo.com/sa/dev", "/pkg.service/baz", False, None),                  # default deny
    ("spiffe://foo.com/sa/admin1", "/other.service/foo", False, None),
    (None, "/pkg.service/foo", False, None),            # anonymous: "*" means any authenticated principal
    ("spiffe://foo.com/sa/admin10", "/pkg.service/foo", True, "dev-access"),   # exact, not a prefix
])
def test_the_grpc_documentation_example(principal, path, allowed, rule):
    decision = Policy.load(A43_EXAMPLE).decide(principal, path)
    assert (decision.allowed, decision.rule) == (allowed, rule)


def test_prefixes_suffixes_and_anonymous_callers():
    policy = Policy.load(json.dumps({
        "name": "p",
        "allow_rules": [
            {"name": "team-a", "source": {"principals": ["spiffe://example.org/team-a/*"]},
             "request": {"paths": ["/switchboard.echo.Echo/echo*"]}},
            {"name": "dns", "source": {"principals": ["*.example.org"]}},
            {"name": "empty-principal", "source": {"principals": [""]}, "request": {"paths": ["/x.Y/empty"]}},
            {"name": "anyone", "source": {"principals": []}, "request": {"paths": ["/x.Y/open"]}},
            {"name": "both-stars", "request": {"paths": ["*/mid*"]}},
        ],
    }))
    assert policy.decide("spiffe://example.org/team-a/billing", "/switchboard.echo.Echo/echoDoubles").allowed
    assert not policy.decide("spiffe://example.org/team-b/billing", "/switchboard.echo.Echo/echoDoubles").allowed
    assert not policy.decide("spiffe://example.org/team-a/billing", "/switchboard.echo.Echo/divide").allowed
    assert policy.decide("api.example.org", "/any.Thing/at-all").rule == "dns"
    # an anonymous caller matches no principal pattern, not even "": only rules without principals
    assert not policy.decide(None, "/x.Y/empty").allowed
    assert policy.decide(None, "/x.Y/open").rule == "anyone"
    # a leading star wins: "*/mid*" is the suffix "/mid*", as on the Java side
    assert policy.decide(None, "/a.B/mid*").rule == "both-stars" and not policy.decide(None, "/a.B/middle").allowed


@pytest.mark.parametrize("text, where", [
    ('{"name": "p",\n "allow_rules": [}', "line 2 column"),
    ('{"allow_rules": []}', '"name" is absent'),
    ('{"name": "p"}', '"allow_rules" is absent'),
    ('{"name": "p", "allow_rules": []}', '"allow_rules" is absent or empty'),
    ('{"name": "p", "name": "q", "allow_rules": [{"name": "r"}]}', '"name" appears twice in one object'),
    ('{"name": "p", "allow_rules": [{"name": "r"}], "deny_rule": []}', "unknown field 'deny_rule'"),
    ('{"name": "p", "allow_rules": [{"source": {}}]}', 'allow_rules[0]: a rule needs a non-empty "name"'),
    ('{"name": "p", "allow_rules": [{"name": "r", "request": {"paths": [7]}}]}',
     "allow_rules[0].request.paths[0]: a pattern is a string"),
    ('{"name": "p", "allow_rules": [{"name": "r", "request": {"paths": "/a/b"}}]}', "expected a list"),
    ('{"name": "p", "allow_rules": [{"name": "r", "source": {"principal": ["a"]}}]}', "unknown field 'principal'"),
    ('{"name": "p", "allow_rules": [{"name": "r", "request": {"headers": [{"key": "x", "values": ["1"]}]}}]}',
     "allow_rules[0].request.headers: not supported"),
    ('{"name": "p", "allow_rules": [{"name": "r"}, {"name": "r"}]}', "two rules are named 'r'"),
    ('["not", "an", "object"]', "expected an object"),
])
def test_a_malformed_policy_is_refused_with_where_and_why(text, where):
    with pytest.raises(PolicyError) as refused:
        Policy.parse(text, "policy.json")
    assert where in str(refused.value) and str(refused.value).startswith("policy.json")


def write(path, policy):
    with open(path, "w", encoding="utf-8") as f:
        f.write(policy if isinstance(policy, str) else json.dumps(policy))


def test_a_changed_file_takes_effect_and_a_broken_one_keeps_the_old(workdir, caplog):
    path = os.path.join(workdir, "reloaded-policy.json")
    write(path, {"name": "first", "allow_rules": [{"name": "a", "request": {"paths": ["/x.Y/a"]}}]})
    policy = FilePolicy(path, check_seconds=0)
    assert policy.decide(None, "/x.Y/a").allowed and not policy.decide(None, "/x.Y/b").allowed
    write(path, {"name": "second", "allow_rules": [{"name": "b", "request": {"paths": ["/x.Y/b"]}}]})
    assert policy.decide(None, "/x.Y/b").allowed and not policy.decide(None, "/x.Y/a").allowed
    with caplog.at_level(logging.ERROR, logger="switchboard.authz"):
        write(path, '{"name": "third", "allow_rules": [')
        assert policy.decide(None, "/x.Y/b").allowed, "the broken file left the second policy in force"
    assert any(r.levelno == logging.ERROR and "not reloaded, keeping second" in r.getMessage() and "line 1" in
               r.getMessage() for r in caplog.records)


def test_a_policy_file_that_does_not_parse_refuses_to_start(workdir):
    path = os.path.join(workdir, "broken-policy.json")
    write(path, '{"name": "p", "allow_rules": [{"name": "r", "source": {"principals": "*"}}]}')
    with pytest.raises(PolicyError, match=r"allow_rules\[0\]\.source\.principals: expected a list"):
        FilePolicy(path)
