"""Fixtures: the real `ensemble` binary on 127.0.0.1, port 0, with a temp data dir and token file."""

from __future__ import annotations

import os
import secrets
import select
import signal
import string
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[4]
STARTUP_TIMEOUT = 20.0

# Everything here talks to 127.0.0.1 only: never through a proxy from the environment (httpx and
# websockets both honour *_PROXY variables).
for _var in ("NO_PROXY", "no_proxy"):
    os.environ[_var] = ",".join(filter(None, [os.environ.get(_var), "127.0.0.1", "localhost"]))


@dataclass(frozen=True)
class Server:
    base_url: str
    token: str
    workspace: Path
    data_dir: Path
    log: Path
    pid: int

    @property
    def addr(self) -> str:
        return self.base_url.removeprefix("http://")


def ensemble_bin() -> Path:
    path = Path(os.environ.get("ENSEMBLE_BIN") or REPO / "target" / "debug" / "ensemble")
    if not path.is_absolute():
        path = REPO / path
    if not os.access(path, os.X_OK):
        pytest.exit(f"{path} is missing: run `cargo build -p ensemble-server` first (or set ENSEMBLE_BIN)", 2)
    return path


def _write_token(path: Path) -> str:
    alphabet = string.ascii_letters + string.digits
    token = "".join(secrets.choice(alphabet) for _ in range(48))
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(token + "\n")
    return token


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the server's process group (it drains and exits 0), SIGKILL if it lingers."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            pass
    # Whatever is left of the group (the server, or anything it started) goes too.
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait(timeout=15)
    if proc.stdout is not None:
        proc.stdout.close()


@contextmanager
def run_server(*extra: str, root: Path | None = None, listen: str = "127.0.0.1:0") -> Iterator[Server]:
    """Starts `ensemble serve` in its own process group and stops it (and the group) at the end.
    `root` (a temp dir by default) holds data/, work/, the token file and the server's log; reuse
    it to restart a server on the same data."""
    with tempfile.TemporaryDirectory(prefix="ensemble-pytest-") as tmp:
        base = root or Path(tmp)
        workspace = (base / "work").resolve()
        workspace.mkdir(exist_ok=True)
        data = base / "data"
        token_file = base / "token"
        token = token_file.read_text().strip() if token_file.exists() else _write_token(token_file)
        log = base / "server.log"
        args = [
            str(ensemble_bin()),
            "serve",
            "--listen",
            listen,
            "--data-dir",
            str(data),
            "--token-file",
            str(token_file),
            "--workspace-roots",
            str(workspace),
            "--default-cwd",
            str(workspace),
            *extra,
        ]
        if "--scripted-chunk-delay-ms" not in extra:
            args += ["--scripted-chunk-delay-ms", "1"]
        env = {k: v for k, v in os.environ.items() if not k.startswith("ENSEMBLE_")}
        env.setdefault("RUST_LOG", "info")
        with open(log, "ab") as err:
            proc = subprocess.Popen(
                args, stdout=subprocess.PIPE, stderr=err, stdin=subprocess.DEVNULL, env=env, start_new_session=True
            )
        try:
            assert proc.stdout is not None
            deadline = time.monotonic() + STARTUP_TIMEOUT
            line = b""
            while not line.endswith(b"\n"):
                left = deadline - time.monotonic()
                ready, _, _ = select.select([proc.stdout], [], [], max(left, 0))
                if not ready:
                    raise RuntimeError(f"ensemble did not start within {STARTUP_TIMEOUT}s: {log.read_text()[-2000:]}")
                chunk = os.read(proc.stdout.fileno(), 1)
                if not chunk:
                    raise RuntimeError(f"ensemble exited ({proc.wait()}): {log.read_text()[-2000:]}")
                line += chunk
            text = line.decode().strip()
            prefix = "listening on http://"
            assert text.startswith(prefix), text
            yield Server(
                base_url="http://" + text.removeprefix(prefix),
                token=token,
                workspace=workspace,
                data_dir=data,
                log=log,
                pid=proc.pid,
            )
        finally:
            _stop(proc)


@pytest.fixture(scope="session")
def server() -> Iterator[Server]:
    """One server for the suite; every test uses its own room."""
    with run_server() as s:
        yield s
