"""A first session: start it, run a turn, answer an approval, close it. It ends by itself.

    ENSEMBLE_URL=$(ensemble url) ENSEMBLE_TOKEN=$(ensemble token) python3 first_session.py
"""

import asyncio
import os
import subprocess

from ensemble_client import AuthenticatedClient
from ensemble_client.api.sessions import close_session, start_session
from ensemble_client.models import Decision, InteractionRequestedEvent, Session, StartSessionRequest
from ensemble_client.session import run_turn

ROOM = "demo"


def setting(variable: str, command: str) -> str:
    """$ENSEMBLE_URL / $ENSEMBLE_TOKEN, else what `ensemble url` / `ensemble token` prints."""
    value = os.environ.get(variable)
    if value is None:
        value = subprocess.run(["ensemble", command], check=True, capture_output=True, text=True).stdout
    return value.strip()


def approve(event: InteractionRequestedEvent) -> Decision:
    print(f"agent asks: {event.payload.title} -> accept")
    return Decision.ACCEPT


async def main() -> None:
    url, token = setting("ENSEMBLE_URL", "url"), setting("ENSEMBLE_TOKEN", "token")
    async with AuthenticatedClient(base_url=url, token=token) as api:
        session = await start_session.asyncio(ROOM, client=api, body=StartSessionRequest())
        if not isinstance(session, Session):
            raise SystemExit(f"could not start a session: {session}")
        sid = session.session_id
        try:
            # The scripted provider (the default) echoes plain lines and runs `/…` directives.
            turn = await run_turn(api, url, token, ROOM, sid, "hello\n/tool grep -n TODO")
            print(f"[{turn.status}] {turn.reply}")
            # `/run` asks for approval first: `approve` answers it.
            turn = await run_turn(api, url, token, ROOM, sid, "/run make test", on_interaction=approve)
            print(f"[{turn.status}] {turn.reply}")
        finally:
            await close_session.asyncio_detailed(ROOM, sid, client=api)
    print(f"closed {sid}")


if __name__ == "__main__":
    asyncio.run(main())
