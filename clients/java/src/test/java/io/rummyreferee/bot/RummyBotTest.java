package io.rummyreferee.bot;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class RummyBotTest {

    private static final Bot FIRST_LEGAL = (view, legal, request) -> legal.get(0);

    /** With nothing listening (a Unix socket path or a closed TCP port), play fails at once naming the address. */
    @Test
    void noRefereeIsOneLineNamingTheAddress() throws Exception {
        Path dir = Files.createTempDirectory("rummy-java-");
        int closed;
        try (ServerSocket socket = new ServerSocket(0)) {
            closed = socket.getLocalPort();
        }
        try {
            for (String address : List.of("unix:" + dir.resolve("none.sock"), "127.0.0.1:" + closed)) {
                BotOptions options = BotOptions.parse(new String[] {"--referee", address},
                        Map.of("RUMMY_BOT_TOKEN", "tok-7f3a"));
                RummyBot.RefereeUnreachableException e = assertThrows(RummyBot.RefereeUnreachableException.class,
                        () -> RummyBot.play(FIRST_LEGAL, options));
                assertEquals(address, e.address());
                assertTrue(e.getMessage().startsWith("cannot reach the referee at " + address + ": "), e.getMessage());
                assertFalse(e.getMessage().contains("\n") || e.getMessage().contains("tok-7f3a"), e.getMessage());
            }
        } finally {
            Files.deleteIfExists(dir);
        }
    }

    @Test
    void optionsPrintWithoutTheirTokens() {
        BotOptions seat = BotOptions.parse(new String[] {}, Map.of(
                "RUMMY_REFEREE", "unix:/run/rummy/referee.sock", "RUMMY_MATCH", "m1", "RUMMY_SEAT_TOKEN", "seat-secret"));
        BotOptions bot = BotOptions.parse(new String[] {"--bot-token", "bot-secret"}, Map.of());
        assertTrue(seat.seatMode());
        assertEquals("unix:/run/rummy/referee.sock", seat.referee());
        for (BotOptions o : List.of(seat, bot)) {
            assertFalse(o.toString().contains("secret"), o.toString());
        }
        assertTrue(seat.toString().contains("m1"));
    }
}
