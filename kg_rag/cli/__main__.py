"""``python -m kg_rag.cli``."""

import sys

from kg_rag.cli import main

sys.exit(main())
