"""PostgreSQL and Redis servers of a test's own, on free loopback ports, that the test may restart.

The suite's shared servers (started by scripts/test.sh) must never be restarted under other tests; a test
that restarts a server starts its own. Processes are stopped by the PID the test recorded, never by name.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

import psycopg
import pytest
import redis

REDIS_SERVER = shutil.which("redis-server")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class PrivateRedis:
    """A redis-server that keeps nothing on disk (like the desk's own): a restart forgets every key."""

    def __init__(self, state: Path) -> None:
        if REDIS_SERVER is None:
            # The suite never skips: scripts/test.sh installs redis-server; without it this is a failure.
            pytest.fail("redis-server is not installed (apt-get install redis-server)")
        self.state = state
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        command = [str(REDIS_SERVER), "--port", str(self.port), "--bind", "127.0.0.1", "--save", ""]
        self.process = subprocess.Popen(
            [*command, "--appendonly", "no", "--daemonize", "no", "--dir", str(self.state)],
            stdout=subprocess.DEVNULL,
        )
        client = redis.Redis(host="127.0.0.1", port=self.port)
        deadline = time.monotonic() + 5
        while True:
            try:
                client.ping()
                break
            except redis.ConnectionError:
                if time.monotonic() > deadline or self.process.poll() is not None:
                    raise
                time.sleep(0.02)
        client.close()

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=5)
            self.process = None

    def restart(self) -> None:
        self.stop()
        self.start()


def _pg_bin() -> Path:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin"))
    if not found:
        pytest.fail("PostgreSQL server binaries not found under /usr/lib/postgresql")
    return found[-1]


class PrivatePostgres:
    """A throw-away PostgreSQL cluster (initdb, trust auth on loopback), run as the postgres user."""

    def __init__(self, state: Path) -> None:
        self.dir = state
        self.port = free_port()
        self.bin = _pg_bin()
        self.data = state / "data"
        self.dir.chmod(0o755)
        if os.geteuid() == 0:
            shutil.chown(self.dir, "postgres", "postgres")
        self._run(self.bin / "initdb", "-D", self.data, "-U", "postgres", "--auth=trust", "-E", "UTF8")

    def _run(self, *args: str | Path) -> None:
        command = [str(arg) for arg in args]
        if os.geteuid() == 0:
            command = ["runuser", "-u", "postgres", "--", *command]
        done = subprocess.run(command, check=False, capture_output=True, text=True)
        if done.returncode != 0:
            pytest.fail(f"{' '.join(command)} failed: {done.stderr[-2000:]}")

    @property
    def url(self) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/desk"

    def start(self) -> None:
        options = (
            f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.dir} -c fsync=off"
            " -c default_toast_compression=lz4"  # as scripts/lib.sh starts the desk's own
        )
        self._run(
            self.bin / "pg_ctl",
            "-D",
            self.data,
            "-l",
            str(self.dir / "log"),
            "-w",
            "-o",
            options,
            "start",
        )

    def create_database(self) -> None:
        with psycopg.connect(host="127.0.0.1", port=self.port, user="postgres", dbname="postgres") as admin:
            admin.autocommit = True
            admin.execute("CREATE DATABASE desk")

    def restart(self) -> None:
        """A fast shutdown (every connection is cut, as in a crash or a failover) and a start."""
        self._run(self.bin / "pg_ctl", "-D", self.data, "-m", "fast", "-w", "stop")
        self.start()

    def stop(self) -> None:
        with contextlib.suppress(subprocess.CalledProcessError):
            self._run(self.bin / "pg_ctl", "-D", self.data, "-m", "immediate", "-w", "stop")

    def connect(self) -> psycopg.Connection[tuple[object, ...]]:
        return psycopg.connect(
            host="127.0.0.1", port=self.port, user="postgres", dbname="desk", autocommit=True
        )
