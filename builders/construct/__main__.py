"""``python -m builders.construct construct --vg DIR --task ap --out DIR``."""

import sys

from builders.construct.cli import main

sys.exit(main())
