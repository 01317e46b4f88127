"""``python -m referee ARGS``: the ``referee`` command (``referee.tools.cli``) without its console script."""

import sys

from referee.tools.cli import main

sys.exit(main())
