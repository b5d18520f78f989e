"""``python -m toxeval``: the ``toxeval`` command (as ``python -m toxeval.cli``)."""

import sys

from toxeval.cli.entry import main

sys.exit(main())
