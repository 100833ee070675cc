import sys

from deepacp.cli import main

sys.exit(main())
