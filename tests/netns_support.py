"""Hosts of their own for tests: Linux network namespaces joined to this one by veth pairs.

Each :class:`NetHost` is a namespace with loopback up and one veth end holding ``address`` (a /30
whose other address, ``gateway``, sits on this side), so a server inside listens on an address only
this side can reach, as on another machine. Needs root and ``ip`` (iproute2): under ``CI=true`` a
namespace that cannot be made fails the test, elsewhere it skips. Everything made is removed on exit,
on failure too: the processes left in each namespace are killed by PID, then the namespace (and with
it the veth pair) is deleted.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from typing import Any

from real_parts import unavailable

__all__ = ["NetHost", "network_hosts"]


def _ip(*args: str) -> str:
    return subprocess.run(["ip", *args], check=True, capture_output=True, text=True, timeout=30).stdout


def _unavailable(reason: str) -> None:
    message = f"network namespaces are needed for this test (root and iproute2): {reason}"
    unavailable(message)


@dataclass(frozen=True)
class NetHost:
    """A namespace ``namespace`` reachable from here at ``address`` (its side of the veth pair)."""

    namespace: str
    address: str
    gateway: str

    def popen(self, argv: Sequence[str], **kwargs: Any) -> subprocess.Popen[str]:
        """Start ``argv`` inside the namespace (``ip netns exec`` execs it: the PID is the program's)."""
        return subprocess.Popen(["ip", "netns", "exec", self.namespace, *argv], text=True, **kwargs)

    def pids(self) -> list[int]:
        """Every live process inside the namespace."""
        return [int(pid) for pid in _ip("netns", "pids", self.namespace).split()]

    def kill_all(self, *, timeout: float = 10.0) -> list[int]:
        """SIGKILL every process in the namespace, as if the host lost power; returns when none is left.
        The namespace, its address and its link stay: the host can be started again."""
        killed: list[int] = []
        deadline = time.monotonic() + timeout
        while pids := self.pids():
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    continue
                killed.append(pid)
            if time.monotonic() > deadline:
                raise AssertionError(f"processes in {self.namespace} survived SIGKILL: {pids}")
            time.sleep(0.01)  # until the kernel has taken them down, bounded by the deadline
        return killed


def _free_subnet() -> str:
    """A 10.x.y.0/24 prefix no interface here uses, for this run's /30s."""
    used = _ip("-o", "-4", "addr", "show")
    for _ in range(50):
        prefix = f"10.{random.randint(200, 254)}.{random.randint(0, 255)}."
        if prefix not in used:
            return prefix
    raise AssertionError("no free 10.x.y.0/24 for the test's namespaces")


@contextmanager
def _namespace(name: str, link: str, prefix: str, index: int) -> Iterator[NetHost]:
    gateway, address = f"{prefix}{4 * index + 1}", f"{prefix}{4 * index + 2}"
    peer = link[:-1] + "n"
    try:
        _ip("netns", "add", name)
    except (OSError, subprocess.CalledProcessError) as exc:
        _unavailable(getattr(exc, "stderr", None) or str(exc))
    host = NetHost(name, address, gateway)
    try:
        _ip("link", "add", link, "type", "veth", "peer", "name", peer, "netns", name)
        _ip("addr", "add", f"{gateway}/30", "dev", link)
        _ip("link", "set", link, "up")
        _ip("-n", name, "link", "set", "lo", "up")
        _ip("-n", name, "addr", "add", f"{address}/30", "dev", peer)
        _ip("-n", name, "link", "set", peer, "up")
        yield host
    finally:
        try:
            host.kill_all()
        finally:
            subprocess.run(["ip", "netns", "delete", name], capture_output=True, timeout=30)
            subprocess.run(["ip", "link", "delete", link], capture_output=True, timeout=30)


@contextmanager
def network_hosts(count: int) -> Iterator[list[NetHost]]:
    """``count`` namespaces, each on a /30 of its own with this side; all removed on exit."""
    if os.geteuid() != 0:
        _unavailable("not running as root")
    if shutil.which("ip") is None:
        _unavailable("the ip command (iproute2) is not installed")
    tag = uuid.uuid4().hex[:6]
    prefix = _free_subnet()
    with ExitStack() as stack:
        yield [stack.enter_context(_namespace(f"petstore-{tag}-{i}", f"ps{tag}{i}h", prefix, i)) for i in range(count)]
