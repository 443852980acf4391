"""`python -m controller …` is the `aios` command."""

import sys

from controller.cli import main

sys.exit(main())
