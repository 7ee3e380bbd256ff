"""``python -m psit_lib.cli``: the same as the ``psit`` command."""

import sys

from psit_lib.cli import main

sys.exit(main())
