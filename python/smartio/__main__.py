# SPDX-License-Identifier: LGPL-2.1-or-later
import sys

from .cli import main

sys.exit(main())
