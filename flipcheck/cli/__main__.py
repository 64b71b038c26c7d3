"""``python -m flipcheck.cli``: the same as the ``flipcheck`` command."""

import sys

from flipcheck.cli import main

sys.exit(main())
