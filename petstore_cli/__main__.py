import sys

from petstore_cli.main import main

sys.exit(main())
