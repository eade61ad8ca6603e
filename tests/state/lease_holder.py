"""A process that takes a lease and holds it until killed: ``python lease_holder.py STATE STATE_DIR NAME``.

Prints ``held`` once it holds the lease (``waiting`` first when its first try found it held by another); tests
kill it with SIGKILL.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from petstore_state.lease import open_lease


async def main(state: str, state_dir: Path, name: str) -> None:
    lease = open_lease(state, state_dir=state_dir, name=name, ttl=3.0, check=1.0, retry=0.5)
    if not await lease.acquire():
        print("waiting", flush=True)
    holding = asyncio.create_task(lease.hold(asyncio.Event()))
    await lease.wait_held()
    print("held", flush=True)
    await holding


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], Path(sys.argv[2]), sys.argv[3]))
