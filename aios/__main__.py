"""`python -m aios …` is the `aios` command."""

import sys

from aios.cli import main

sys.exit(main())
