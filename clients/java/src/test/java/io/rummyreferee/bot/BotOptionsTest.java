package io.rummyreferee.bot;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

class BotOptionsTest {

    @Test
    void botTokenModeFromFlags() {
        BotOptions o = BotOptions.parse(new String[] {"--referee", "h:1", "--bot-token", "T", "--seed=7"}, Map.of());
        assertEquals("h:1", o.referee());
        assertEquals(Optional.of("T"), o.botToken());
        assertEquals(OptionalLong.of(7), o.seed());
        assertFalse(o.seatMode());
    }

    @Test
    void environmentIsTheFallback() {
        BotOptions o = BotOptions.parse(new String[] {},
                Map.of("RUMMY_REFEREE", "r:2", "RUMMY_BOT_TOKEN", "E", "RUMMY_BOT_SEED", "3"));
        assertEquals("r:2", o.referee());
        assertEquals(Optional.of("E"), o.botToken());
        assertEquals(OptionalLong.of(3), o.seed());
        assertEquals(BotOptions.DEFAULT_REFEREE, BotOptions.parse(new String[] {"--bot-token", "T"}, Map.of()).referee());
    }

    @Test
    void aSeatOnTheCommandLineWinsOverAnInheritedBotToken() {
        BotOptions o = BotOptions.parse(new String[] {"--match", "M", "--token", "S"}, Map.of("RUMMY_BOT_TOKEN", "E"));
        assertTrue(o.seatMode());
        assertEquals(Optional.empty(), o.botToken());
        assertEquals(Optional.of("M"), o.matchId());
        assertEquals(Optional.of("S"), o.seatToken());
    }

    @Test
    void refusesIncompleteOrUnknownFlags() {
        assertThrows(IllegalArgumentException.class, () -> BotOptions.parse(new String[] {}, Map.of()));
        assertThrows(IllegalArgumentException.class, () -> BotOptions.parse(new String[] {"--match", "M"}, Map.of()));
        assertThrows(IllegalArgumentException.class, () -> BotOptions.parse(new String[] {"--bot-token"}, Map.of()));
        assertThrows(IllegalArgumentException.class,
                () -> BotOptions.parse(new String[] {"--bot-token", "T", "--colour", "red"}, Map.of()));
        assertThrows(IllegalArgumentException.class,
                () -> BotOptions.parse(new String[] {"--bot-token", "T", "--seed", "x"}, Map.of()));
    }
}
