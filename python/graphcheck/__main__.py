"""`python -m graphcheck ARGS` is `graphcheck ARGS`."""
import sys

from graphcheck._launcher import main

sys.exit(main())
