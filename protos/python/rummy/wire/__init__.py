"""The wire for Python: the generated messages (``rummy.referee.v1``) mapped to the rules core's values
(``protocodec``) and the event loop both ends of a stream run on (``loops``), shared by the SDK and the referee."""
