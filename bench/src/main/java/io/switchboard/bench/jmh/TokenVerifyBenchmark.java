package io.switchboard.bench.jmh;

import io.switchboard.protocol.spi.JwtTokenVerifier;
import io.switchboard.testing.TestTokens;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What a server pays per call to verify the bearer token a client sends with every call: the
 * test issuer's RS256 token (2,048-bit key) through {@link JwtTokenVerifier}, with no token
 * remembered ({@code remembered=0}: the signature checked on every call) and with the default
 * memo ({@code remembered=1024}: checked once, then its SHA-256 looked up).
 *
 * <pre>{@code
 * ./switchboard bench --jmh TokenVerify -- -f 1 -wi 2 -w 1 -i 3 -r 1
 * }</pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"-Xms256m", "-Xmx256m"})
public class TokenVerifyBenchmark {
    @Param({"0", "1024"})
    public int remembered;

    private JwtTokenVerifier verifier;
    private String token;

    @Setup
    public void setUp() {
        TestTokens tokens = TestTokens.get();
        verifier = JwtTokenVerifier.builder().jwks(tokens.jwksFile()).issuer(TestTokens.ISSUER)
                .audience(TestTokens.AUDIENCE).rememberVerified(remembered).build();
        token = tokens.valid("alice");
    }

    @Benchmark
    public String verify() {
        return verifier.verify(token);
    }
}
