"""Images and files in a turn through the client: an image from a file on this machine (sent as
data), a file of the session's workspace, the scripted agent's description of both, and the kept
image read back by its attachment id."""

from __future__ import annotations

import base64
from pathlib import Path

from ensemble_client import AuthenticatedClient
from ensemble_client.api.sessions import start_session
from ensemble_client.api.turns import get_attachment
from ensemble_client.models import (
    FileInput,
    FileInputType,
    ImageInput,
    Session,
    StartSessionRequest,
    TextInput,
    TextInputType,
    TurnStartedEvent,
)
from ensemble_client.session import image_file, reply_text, run_turn
from ensemble_client.types import File

from .conftest import Server

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)


async def test_an_image_and_a_file_in_a_turn(server: Server, tmp_path: Path) -> None:
    room, sid = "images-py", "i1"
    work = server.workspace / "py-images"
    work.mkdir()
    (work / "notes.md").write_text("hello notes\n")
    shot = tmp_path / "shot.png"
    shot.write_bytes(PNG)
    async with AuthenticatedClient(base_url=server.base_url, token=server.token) as api:
        started = await start_session.asyncio(room, client=api, body=StartSessionRequest(session_id=sid, cwd=str(work)))
        assert isinstance(started, Session)
        items = [
            TextInput(type_=TextInputType.TEXT, text="look"),
            image_file(shot),
            FileInput(type_=FileInputType.FILE, path="notes.md"),
        ]
        result = await run_turn(api, server.base_url, server.token, room, sid, items)
        assert result.status == "completed"
        text = reply_text(result.events)
        assert f"You sent an image named shot.png (image/png, {len(PNG)} bytes)." in text
        assert "You sent the file notes.md (text/plain, 12 bytes, first line: hello notes)." in text
        started_event = next(e for e in result.events if isinstance(e, TurnStartedEvent))
        image = started_event.payload.input_[1]
        assert isinstance(image, ImageInput) and isinstance(image.attachment, str)
        assert not image.data, "the data is never sent back"
        kept = await get_attachment.asyncio(room, sid, image.attachment, client=api)
        assert isinstance(kept, File)
        assert kept.payload.read() == PNG
