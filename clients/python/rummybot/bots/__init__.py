"""The bundled example bots: ``random_bot``, ``greedy`` and ``noisy`` (greedy with random mistakes)."""
