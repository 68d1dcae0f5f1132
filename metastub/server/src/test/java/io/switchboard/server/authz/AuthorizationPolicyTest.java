package io.switchboard.server.authz;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.protocol.Peer;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The policy reader on gRPC's documented example (gRFC A43) and on malformed files. */
class AuthorizationPolicyTest {
    private static final Peer ADMIN1 = Peer.of("spiffe://foo.com/sa/admin1", Peer.Authentication.MUTUAL_TLS, "10.0.0.1:1");
    private static final Peer ADMIN2 = Peer.of("spiffe://foo.com/sa/admin2", Peer.Authentication.TOKEN, null);
    private static final Peer DEV = Peer.of("spiffe://foo.com/sa/dev", Peer.Authentication.MUTUAL_TLS, null);
    private static final Peer ANONYMOUS = Peer.anonymous("10.0.0.9:5");

    /** gRFC A43's example, as published: its "dev-access" rule matches a header. */
    private static final String A43_EXAMPLE = """
            {
            	"name": "example-policy",
            	"allow_rules": [
            		{
            			"name": "admin-access",
            			"source": {
            				"principals": [
            					"spiffe://foo.com/sa/admin1",
            					"spiffe://foo.com/sa/admin2"
            				]
            			},
            			"request": {
            				"paths": ["/pkg.service/*"]
            			}
            		},
            		{
            			"name": "dev-access",
            			"source": {
            				"principals": ["*", ""]
            			},
            			"request": {
            				"paths": [
            					"/pkg.service/foo",
            					"/pkg.service/bar"
            				],
            				"headers": [
            					{
            						"key": "dev-path",
            						"values": ["/dev/path/*"]
            					}
            				]
            			}
            		}
            	],
            	"deny_rules": [
            		{
            			"name": "deny-access",
            			"request": {
            				"paths": [
            					"*/secret"
            				]
            			}
            		}
            	]
            }
            """;

    @Test
    void theDocumentedExampleIsRefusedAtItsHeaderMatchWithTheLine() {
        PolicyException e = assertThrows(PolicyException.class, () -> AuthorizationPolicy.parse(A43_EXAMPLE));
        assertEquals(26, e.line(), e.getMessage());
        assertTrue(e.reason().contains("\"request.headers\" is not supported"), e.reason());
    }

    @Test
    void theDocumentedExampleWithoutItsHeaderMatchDecidesAsItsTextSays() {
        String withoutHeaders = A43_EXAMPLE.replaceAll("(?s),\\s*\"headers\": \\[\\s*\\{.*?\\}\\s*\\]", "");
        AuthorizationPolicy p = AuthorizationPolicy.parse(withoutHeaders);
        assertEquals("example-policy", p.name());
        assertEquals(2, p.allowRules().size());
        assertEquals(1, p.denyRules().size());

        // the admins may call any method of pkg.service
        assertAllowed(p, ADMIN1, "/pkg.service/anything", "admin-access");
        assertAllowed(p, ADMIN2, "/pkg.service/foo", "admin-access");
        // any authenticated caller may call foo and bar, and nothing else
        assertAllowed(p, DEV, "/pkg.service/bar", "dev-access");
        assertDenied(p, DEV, "/pkg.service/baz", null);
        // nobody may call secret, not even the admins: deny rules come first
        assertDenied(p, ADMIN1, "/pkg.service/secret", "deny-access");
        assertDenied(p, DEV, "/other.service/secret", "deny-access");
        // an anonymous caller matches no principal, not even "*"
        assertDenied(p, ANONYMOUS, "/pkg.service/foo", null);
        assertDenied(p, Peer.UNKNOWN, "/pkg.service/foo", null);
    }

    @Test
    void aRuleWithoutSourceOrRequestMatchesEveryCallerAndPath() {
        AuthorizationPolicy p = AuthorizationPolicy.parse("""
                {"name": "open", "allow_rules": [{"name": "all"}]}""");
        assertAllowed(p, ANONYMOUS, "/switchboard.echo.Echo/echoDoubles", "all");
        assertAllowed(p, ADMIN1, "/x/y", "all");

        AuthorizationPolicy emptyLists = AuthorizationPolicy.parse("""
                {"name": "open", "deny_rules": [],
                 "allow_rules": [{"name": "all", "source": {"principals": []}, "request": {"paths": []}}]}""");
        assertAllowed(emptyLists, ANONYMOUS, "/a/b", "all");
    }

    @Test
    void patternsAreExactPrefixSuffixAndPresenceAsInGrpc() {
        AuthorizationPolicy p = AuthorizationPolicy.parse("""
                {
                  "name": "patterns",
                  "allow_rules": [
                    {"name": "exact", "source": {"principals": ["alice"]}, "request": {"paths": ["/s.S/exact"]}},
                    {"name": "prefix", "source": {"principals": ["team-a/*"]}, "request": {"paths": ["/s.S/pre*"]}},
                    {"name": "suffix", "source": {"principals": ["*@example.org"]}, "request": {"paths": ["*/suf"]}},
                    {"name": "presence", "source": {"principals": ["*"]}, "request": {"paths": ["/s.S/any"]}}
                  ]
                }""");
        Peer alice = Peer.of("alice", Peer.Authentication.TOKEN, null);
        assertAllowed(p, alice, "/s.S/exact", "exact");
        assertDenied(p, Peer.of("alice2", Peer.Authentication.TOKEN, null), "/s.S/exact", null);
        assertDenied(p, alice, "/s.S/exact2", null);
        Peer teamA = Peer.of("team-a/billing", Peer.Authentication.MUTUAL_TLS, null);
        assertAllowed(p, teamA, "/s.S/pre", "prefix");
        assertAllowed(p, teamA, "/s.S/prefixed", "prefix");
        assertDenied(p, Peer.of("team-b/billing", Peer.Authentication.MUTUAL_TLS, null), "/s.S/prefixed", null);
        Peer bob = Peer.of("bob@example.org", Peer.Authentication.TOKEN, null);
        assertAllowed(p, bob, "/any.Thing/suf", "suffix");
        assertDenied(p, Peer.of("bob@example.org.evil", Peer.Authentication.TOKEN, null), "/any.Thing/suf", null);
        assertAllowed(p, Peer.of("uid:1000", Peer.Authentication.UNIX_SOCKET, null), "/s.S/any", "presence");
        assertDenied(p, ANONYMOUS, "/s.S/any", null);
    }

    @Test
    void malformedJsonIsRefusedWithItsLine() {
        assertRefused("""
                {
                  "name": "p",
                  "allow_rules": [{"name": "a"},]
                }""", 3, "malformed JSON");
        assertRefused("""
                {
                  "name": "p"
                  "allow_rules": []
                }""", 3, "malformed JSON");
        assertRefused("{\n  \"name\": \"p\",\n  \"allow_rules\": [{\"name\": \"a\"}]\n", 4, "malformed JSON");
        assertRefused("   \n", 1, "empty");
        assertRefused("[]", 1, "a policy is a JSON object");
        assertRefused("""
                {"name": "p", "allow_rules": [{"name": "a"}]}
                {"name": "q"}""", 2, "more after the policy");
    }

    @Test
    void aPolicyBreakingTheFormIsRefusedWithItsLineAndReason() {
        assertRefused("""
                {
                  "allow_rules": [{"name": "a"}]
                }""", 1, "\"name\" is absent or empty");
        assertRefused("{\"name\": \"\", \"allow_rules\": [{\"name\": \"a\"}]}", 1, "\"name\" is absent or empty");
        assertRefused("""
                {
                  "name": "p",
                  "deny_rules": [{"name": "d"}]
                }""", 1, "\"allow_rules\" is absent or empty");
        assertRefused("{\"name\": \"p\", \"allow_rules\": []}", 1, "\"allow_rules\" is absent or empty");
        assertRefused("""
                {
                  "name": "p",
                  "allow_rules": [
                    {"name": "a"},
                    {"source": {"principals": ["x"]}}
                  ]
                }""", 5, "has no \"name\"");
        assertRefused("""
                {
                  "name": "p",
                  "allow_rules": [{"name": "a"}],
                  "audit_condition": "ON_DENY"
                }""", 4, "unknown field \"audit_condition\"");
        assertRefused("""
                {
                  "name": "p",
                  "allow_rules": [{"name": "a",
                                   "source": {"principals": ["x"], "namespaces": ["y"]}}]
                }""", 4, "unknown field \"namespaces\"");
        assertRefused("""
                {
                  "name": "p",
                  "allow_rules": [{"name": "a", "source": {"principals": "alice"}}]
                }""", 3, "\"principals\" is a list of strings, not a string");
        assertRefused("""
                {
                  "name": "p",
                  "allow_rules": [{"name": "a", "request": {"paths": ["/a/b", 7]}}]
                }""", 3, "\"paths\" is a list of strings, not a number");
        assertRefused("""
                {
                  "name": "p",
                  "allow_rules": [
                    {"name": "a"},
                    {"name": "a", "request": {"paths": ["/x/y"]}}
                  ]
                }""", 5, "two rules named \"a\"");
        assertRefused("""
                {
                  "name": "p",
                  "name": "q",
                  "allow_rules": [{"name": "a"}]
                }""", 3, "\"name\" appears twice");
        assertRefused("""
                {
                  "name": 5,
                  "allow_rules": [{"name": "a"}]
                }""", 2, "\"name\" is a string, not a number");
    }

    @Test
    void aFileIsNamedInItsRefusal(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        java.nio.file.Path file = dir.resolve("authz.json");
        java.nio.file.Files.writeString(file, "{\n\"name\": \"p\",\n\"allow_rules\": [{}]\n}");
        PolicyException e = assertThrows(PolicyException.class, () -> AuthorizationPolicy.read(file));
        assertEquals(3, e.line());
        assertTrue(e.getMessage().startsWith("line 3, column ") && e.getMessage().contains(file.toString()), e.getMessage());
        PolicyException missing = assertThrows(PolicyException.class, () -> AuthorizationPolicy.read(dir.resolve("none.json")));
        assertTrue(missing.getMessage().contains("cannot read"), missing.getMessage());
    }

    @Test
    void aPolicyBuiltInCodeFollowsTheSameRules() {
        AuthorizationPolicy.Rule admins = new AuthorizationPolicy.Rule("admins", List.of("spiffe://foo.com/sa/admin*"), List.of());
        AuthorizationPolicy p = AuthorizationPolicy.of("built", List.of(), List.of(admins));
        assertAllowed(p, ADMIN1, "/any.Thing/op", "admins");
        assertDenied(p, DEV, "/any.Thing/op", null);
        assertThrows(IllegalArgumentException.class, () -> AuthorizationPolicy.of("built", List.of(admins), List.of()));
        assertThrows(IllegalArgumentException.class, () -> AuthorizationPolicy.of("", List.of(), List.of(admins)));
        assertThrows(IllegalArgumentException.class, () -> AuthorizationPolicy.of("built", List.of(), List.of(admins, admins)));
        assertThrows(IllegalArgumentException.class, () -> new AuthorizationPolicy.Rule("", List.of(), List.of()));
    }

    private static void assertRefused(String json, int line, String reason) {
        PolicyException e = assertThrows(PolicyException.class, () -> AuthorizationPolicy.parse(json), json);
        assertTrue(e.reason().contains(reason), "reason: " + e.reason() + " (expected: " + reason + ")");
        assertEquals(line, e.line(), "line of: " + e.getMessage());
        assertFalse(e.getMessage().contains("Troubleshooting"), e.getMessage());
    }

    private static void assertAllowed(AuthorizationPolicy p, Peer peer, String path, String rule) {
        AuthorizationPolicy.Decision d = p.evaluate(peer, path);
        assertTrue(d.allowed(), peer + " on " + path + ": " + d.reason());
        assertEquals(rule, d.rule());
    }

    private static void assertDenied(AuthorizationPolicy p, Peer peer, String path, String rule) {
        AuthorizationPolicy.Decision d = p.evaluate(peer, path);
        assertFalse(d.allowed(), peer + " on " + path + ": " + d.reason());
        if (rule == null) {
            assertNull(d.rule(), d.reason());
        } else {
            assertEquals(rule, d.rule());
        }
    }
}
