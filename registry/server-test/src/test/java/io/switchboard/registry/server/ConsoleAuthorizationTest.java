package io.switchboard.registry.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.switchboard.server.authz.AuthorizationPolicy;
import io.switchboard.testing.TestTokens;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The console under a policy is a registry read: without {@code /switchboard.registry.Registry/console}
 * a reader gets 403 on every page of it, counted as a denial; a reader who may only look up team-a's
 * names sees those and no other, in the page, in live.json, in the schema documents and among the
 * denials; a reader who may list sees every name; a token that does not verify is refused (401).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ConsoleAuthorizationTest {
    private static final String A = "team-a.billing";
    private static final String B = "team-b.payroll";
    private static final AuthorizationPolicy POLICY = AuthorizationPolicy.parse("""
            {
              "name": "console",
              "allow_rules": [
                {"name": "readers", "source": {"principals": ["alice", "root"]},
                 "request": {"paths": ["/switchboard.registry.Registry/console"]}},
                {"name": "alice-reads-team-a", "source": {"principals": ["alice"]},
                 "request": {"paths": ["/switchboard.registry.Registry/lookup/team-a.*"]}},
                {"name": "root-lists", "source": {"principals": ["root"]},
                 "request": {"paths": ["/switchboard.registry.Registry/list"]}}
              ]
            }""");

    private final TestTokens tokens = TestTokens.get();
    private final HttpClient http = HttpClient.newHttpClient();
    private RegistryServer registry;

    @BeforeAll
    void start() throws Exception {
        registry = RegistryServer.builder().authorization(POLICY).tokenVerifier(tokens.verifier()).start();
        for (String name : List.of(A, B)) {
            registry.service().store().bind(RegistryWatchTest.entry(name, name + "-1", 4001, 0));
        }
    }

    @AfterAll
    void stop() {
        registry.close();
    }

    @Test
    void aReaderThePolicyDoesNotAllowGetsForbiddenOnEveryPageAndTheDenialIsCounted() throws Exception {
        for (String page : List.of("", "/live.json", "/console.js", "/schema.xsd?name=" + A + "&instance=" + A + "-1")) {
            assertEquals(403, get(page, null).statusCode(), "anonymous " + page);
            assertEquals(403, get(page, tokens.valid("mallory")).statusCode(), "mallory " + page);
        }
        List<String> denied = registry.denials().stream().map(d -> d.identity() + " " + d.path()).toList();
        assertTrue(denied.contains("ANONYMOUS " + RegistryPaths.console())
                && denied.contains("TOKEN:mallory " + RegistryPaths.console()), denied.toString());
    }

    @Test
    void aReaderWhoMayLookUpSomeNamesSeesThoseOnly() throws Exception {
        String alice = tokens.valid("alice");
        assertEquals(List.of(A), names(get("/live.json", alice).body()));
        String page = get("", alice).body();
        assertTrue(page.contains(A), page);
        assertFalse(page.contains(B), "the page shows a name alice may not look up: " + page);
        assertEquals(200, get("/schema.xsd?name=" + A + "&instance=" + A + "-1", alice).statusCode());
        assertEquals(404, get("/schema.xsd?name=" + B + "&instance=" + B + "-1", alice).statusCode(),
                "a hidden name's schema is as if it were not bound");
        assertEquals(404, get("/schema.proto?name=" + B + "&instance=" + B + "-1", alice).statusCode());
    }

    @Test
    void aReaderWhoMayListSeesEveryName() throws Exception {
        assertEquals(List.of(A, B), names(get("/live.json", tokens.valid("root")).body()));
        assertEquals(200, get("/schema.xsd?name=" + B + "&instance=" + B + "-1", tokens.valid("root")).statusCode());
    }

    @Test
    void deniedCallsOnHiddenNamesAreNotShownToAReaderWhoCannotSeeThem() throws Exception {
        get("", null);   // an anonymous denial of the console: no name, so only a reader of every name sees it
        JsonArray forAlice = live(tokens.valid("alice")).getAsJsonArray("denials");
        for (JsonElement d : forAlice) {
            assertFalse(d.getAsJsonObject().get("path").getAsString().endsWith("/console"), forAlice.toString());
        }
        JsonArray forRoot = live(tokens.valid("root")).getAsJsonArray("denials");
        assertTrue(forRoot.toString().contains(RegistryPaths.console()), forRoot.toString());
    }

    @Test
    void aTokenThatDoesNotVerifyIsRefusedNotReadAsAnonymous() throws Exception {
        for (var hostile : tokens.hostile("root").entrySet()) {
            assertEquals(401, get("/live.json", hostile.getValue()).statusCode(), hostile.getKey());
        }
    }

    private JsonObject live(String token) throws Exception {
        return JsonParser.parseString(get("/live.json", token).body()).getAsJsonObject();
    }

    private static List<String> names(String live) {
        List<String> names = new ArrayList<>();
        for (JsonElement i : JsonParser.parseString(live).getAsJsonObject().getAsJsonArray("instances")) {
            names.add(i.getAsJsonObject().get("name").getAsString());
        }
        return names;
    }

    private HttpResponse<String> get(String page, String token) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(registry.consoleUrl() + page))
                .timeout(Duration.ofMinutes(1));
        if (token != null) {
            request.header("Authorization", "Bearer " + token);
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }
}
