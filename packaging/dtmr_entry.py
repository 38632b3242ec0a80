"""Entry point of the frozen `dtmr` command-line executable, built next to `dtmr-studio`."""

import sys

from dtmr.cli import main

if __name__ == "__main__":
    sys.exit(main())
