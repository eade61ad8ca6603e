"""The service's ASGI app as a module-level ``app``, for servers that import one (``server_app:app``).

The store is opened at lifespan startup in the worker, as ``petstore serve`` does; the database is
``PETSTORE_BENCH_DB`` and the key ``PETSTORE_SERVER_API_KEYS``. No access log (the servers compared write none).
"""

from __future__ import annotations

import os

from petstore_server.served import ServeSettings, served_app

app = served_app(
    ServeSettings(
        db=os.environ["PETSTORE_BENCH_DB"],
        api_keys=tuple(os.environ["PETSTORE_SERVER_API_KEYS"].split(",")),
        access_log=None,
    )
)
