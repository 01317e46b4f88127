"""The rules core: cards, melds, variants, a match; pure Python, no third-party import, no I/O."""
