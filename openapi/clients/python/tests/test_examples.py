"""The documented examples are real code: the README's first session is examples/first_session.py
verbatim, and it and the Python snippet of docs/clients.md run to their end against the real server,
printing the replies of their own session."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from ensemble_client import AuthenticatedClient
from ensemble_client.models import SessionStatus

from .conftest import REPO, Server, ensemble_bin
from .helpers import Api

CLIENT = Path(__file__).resolve().parents[1]
EXAMPLE = CLIENT / "examples" / "first_session.py"
RUN_TIMEOUT = 60

FIRST_SESSION_OUTPUT = re.compile(
    r"\[completed\] You said: hello\n"
    r"agent asks: Run `make test`\? -> accept\n"
    r"\[completed\] The command `make test` ran\.\n"
    r"closed (?P<sid>\S+)\n"
)


def code_blocks(markdown: str, lang: str) -> list[str]:
    return re.findall(rf"^```{lang}\n(.*?)^```$", markdown, flags=re.S | re.M)


def client_env(**extra: str) -> dict[str, str]:
    """The environment of an example: none of the caller's ENSEMBLE_* variables, plus `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENSEMBLE_")}
    return {**env, **extra}


def run_python(path: Path, env: dict[str, str]) -> str:
    """Runs a script to its end (it must end by itself within RUN_TIMEOUT) and returns its stdout."""
    r = subprocess.run(
        [sys.executable, str(path)], env=env, cwd=path.parent, capture_output=True, text=True, timeout=RUN_TIMEOUT
    )
    assert r.returncode == 0, f"{path.name} exited {r.returncode}:\n{r.stdout}\n{r.stderr}"
    return r.stdout


async def assert_closed(server: Server, room: str, sid: str) -> None:
    async with AuthenticatedClient(base_url=server.base_url, token=server.token) as client:
        session = await Api(client, room).session(sid)
        assert session.status == SessionStatus.COMPLETED and not session.live


def test_the_readme_example_is_the_file() -> None:
    readme = (CLIENT / "README.md").read_text()
    assert EXAMPLE.read_text() in code_blocks(readme, "python"), "README.md must show examples/first_session.py verbatim"


async def test_the_first_session_example_ends_with_its_replies(server: Server) -> None:
    out = run_python(EXAMPLE, client_env(ENSEMBLE_URL=server.base_url, ENSEMBLE_TOKEN=server.token))
    match = FIRST_SESSION_OUTPUT.fullmatch(out)
    assert match, out
    await assert_closed(server, "demo", match["sid"])


async def test_the_first_session_example_finds_the_server_with_ensemble_url_and_token(server: Server) -> None:
    # Without ENSEMBLE_URL/ENSEMBLE_TOKEN it asks `ensemble url` and `ensemble token`, which read
    # the running server's data dir (ENSEMBLE_DATA_DIR).
    path = f"{ensemble_bin().parent}{os.pathsep}{os.environ.get('PATH', '')}"
    out = run_python(EXAMPLE, client_env(PATH=path, ENSEMBLE_DATA_DIR=str(server.data_dir)))
    match = FIRST_SESSION_OUTPUT.fullmatch(out)
    assert match, out
    await assert_closed(server, "demo", match["sid"])


async def test_the_clients_doc_python_snippet_ends_with_its_reply(server: Server, tmp_path: Path) -> None:
    doc = (REPO / "docs" / "clients.md").read_text()
    (snippet,) = code_blocks(doc, "python")
    script = tmp_path / "snippet.py"
    script.write_text(snippet)
    # It type-checks as the examples do (scripts/test-python-client sets MYPY_CACHE_DIR).
    check = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-error-summary", str(script)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert check.returncode == 0, check.stdout + check.stderr
    out = run_python(script, client_env(ENSEMBLE_URL=server.base_url, ENSEMBLE_TOKEN=server.token))
    match = re.fullmatch(r"completed You said: hello\nThe command `make test` ran\.\nclosed (?P<sid>\S+)\n", out)
    assert match, out
    await assert_closed(server, "demo", match["sid"])


def test_the_readme_tokens_snippet_type_checks(tmp_path: Path) -> None:
    # The "Tokens and roles" snippet (top-level `await`s on `url`, `admin_token` and `sid`), as the
    # body of a function taking those, under `mypy --strict` as the examples are. test_access.py
    # runs the same steps against the server.
    readme = (CLIENT / "README.md").read_text()
    (snippet,) = [b for b in code_blocks(readme, "python") if "create_token(admin" in b]
    lines = snippet.splitlines()
    imports = [line for line in lines if line.startswith(("from ", "import "))]
    body = [f"    {line}" if line else "" for line in lines if line not in imports]
    script = tmp_path / "tokens_snippet.py"
    script.write_text(
        "\n".join([*imports, "", "", "async def main(url: str, admin_token: str, sid: str) -> None:", *body, ""])
    )
    check = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-error-summary", str(script)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert check.returncode == 0, check.stdout + check.stderr + script.read_text()
