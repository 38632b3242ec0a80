"""`python -m app`: the same as `dtmr-studio`."""

import sys

from .main import main

sys.exit(main())
