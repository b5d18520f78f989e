"""``python -m toxeval.cli``: the ``toxeval`` command."""

import sys

from toxeval.cli.entry import main

sys.exit(main())
