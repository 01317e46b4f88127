package io.rummyreferee.bot;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.InsecureChannelCredentials;
import io.grpc.Status;
import io.grpc.TlsChannelCredentials;
import java.io.UncheckedIOException;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Reconnecting forever and TLS, as the options and the waits between joins say them. */
class ReconnectTest {

    @Test
    void theWaitDoublesToItsCapWithJitter() {
        long[] ceilings = new long[10];
        for (int attempt = 1; attempt <= 10; attempt++) {
            ceilings[attempt - 1] = RummyBot.backoffCeilingMs(
                    RummyBot.RECONNECT_INITIAL_MS, RummyBot.RECONNECT_CAP_MS, attempt);
        }
        assertArrayEquals(new long[] {250, 500, 1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000}, ceilings);
        assertEquals(30000, RummyBot.backoffCeilingMs(250, 30000, 5000), "no overflow");
        for (int attempt : new int[] {1, 3, 8, 40}) {
            long ceiling = RummyBot.backoffCeilingMs(250, 30000, attempt);
            Set<Long> seen = new HashSet<>();
            for (int i = 0; i < 50; i++) {
                long wait = RummyBot.backoffMs(250, 30000, attempt);
                assertTrue(wait >= ceiling / 2 && wait <= ceiling, attempt + ": " + wait);
                seen.add(wait);
            }
            assertTrue(seen.size() > 1, "no jitter: " + seen);
        }
    }

    @Test
    void onlyADroppedStreamIsWorthJoiningAgain() {
        for (Status status : new Status[] {Status.UNAVAILABLE, Status.INTERNAL, Status.RESOURCE_EXHAUSTED}) {
            assertTrue(RummyBot.retryable(status), status.toString());
        }
        for (Status status : new Status[] {Status.UNAUTHENTICATED, Status.PERMISSION_DENIED, Status.FAILED_PRECONDITION}) {
            assertFalse(RummyBot.retryable(status), status.toString());
        }
    }

    @Test
    void readsRummyReconnect() {
        String[] none = {};
        assertTrue(BotOptions.parse(none, Map.of("RUMMY_BOT_TOKEN", "T", "RUMMY_RECONNECT", "forever")).reconnectForever());
        assertTrue(BotOptions.parse(none, Map.of("RUMMY_BOT_TOKEN", "T", "RUMMY_RECONNECT", " Forever ")).reconnectForever());
        assertFalse(BotOptions.parse(none, Map.of("RUMMY_BOT_TOKEN", "T", "RUMMY_RECONNECT", "")).reconnectForever());
        assertFalse(BotOptions.parse(none, Map.of("RUMMY_BOT_TOKEN", "T")).reconnectForever(), "off by default");
        assertTrue(BotOptions.parse(new String[] {"--bot-token", "T", "--reconnect-forever"}, Map.of()).reconnectForever());
        // a typo is told (exit 2 from main), naming the variable, not taken for "no"
        IllegalArgumentException typo = assertThrows(IllegalArgumentException.class,
                () -> BotOptions.parse(none, Map.of("RUMMY_BOT_TOKEN", "T", "RUMMY_RECONNECT", "always")));
        assertTrue(typo.getMessage().startsWith("RUMMY_RECONNECT is 'forever' or unset, not \"always\""),
                typo.getMessage());
    }

    @Test
    void readsTheTlsOptions() {
        assertEquals(Optional.empty(), BotOptions.parse(new String[] {"--bot-token", "T"}, Map.of()).tls());
        assertEquals(Optional.of(BotOptions.Tls.systemRoots()),
                BotOptions.parse(new String[] {"--bot-token", "T", "--tls"}, Map.of()).tls());
        assertEquals(Optional.of(BotOptions.Tls.systemRoots()),
                BotOptions.parse(new String[] {"--bot-token", "T"}, Map.of("RUMMY_TLS", "1")).tls());
        BotOptions ca = BotOptions.parse(new String[] {}, Map.of("RUMMY_BOT_TOKEN", "T", "RUMMY_TLS_ROOT_CERT", "/ca.pem"));
        assertEquals(Optional.of("/ca.pem"), ca.tls().orElseThrow().rootCert());
        assertThrows(IllegalArgumentException.class,
                () -> BotOptions.parse(new String[] {"--bot-token", "T", "--tls-client-cert", "bot.pem"}, Map.of()));
    }

    @Test
    void credentialsFollowTheOptions() {
        assertTrue(RummyBot.credentials(BotOptions.parse(new String[] {"--bot-token", "T"}, Map.of()))
                instanceof InsecureChannelCredentials);
        assertTrue(RummyBot.credentials(BotOptions.parse(new String[] {"--bot-token", "T", "--tls"}, Map.of()))
                instanceof TlsChannelCredentials);
        UncheckedIOException missing = assertThrows(UncheckedIOException.class, () -> RummyBot.credentials(
                BotOptions.parse(new String[] {"--bot-token", "T", "--tls-root-cert", "/nonexistent/ca.pem"}, Map.of())));
        assertTrue(missing.getMessage().contains("/nonexistent/ca.pem"), missing.getMessage());
    }
}
