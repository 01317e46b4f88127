"""The wire for Python: the generated messages mapped to the rules core's values."""
