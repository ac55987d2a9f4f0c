import sys

from treerag.cli import main

sys.exit(main())
