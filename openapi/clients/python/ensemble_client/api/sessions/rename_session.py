from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.error_response import ErrorResponse
from ...models.rename_request import RenameRequest
from ...models.session import Session
from typing import cast



def _get_kwargs(
    room_id: str,
    session_id: str,
    *,
    body: RenameRequest,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}


    

    

    _kwargs: dict[str, Any] = {
        "method": "patch",
        "url": "/v1/rooms/{room_id}/sessions/{session_id}".format(room_id=quote(str(room_id), safe=""),session_id=quote(str(session_id), safe=""),),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> ErrorResponse | Session | None:
    if response.status_code == 200:
        response_200 = Session.from_dict(response.json())



        return response_200

    if 400 <= response.status_code <= 499:
        response_4xx = ErrorResponse.from_dict(response.json())



        return response_4xx

    if 500 <= response.status_code <= 599:
        response_5xx = ErrorResponse.from_dict(response.json())



        return response_5xx

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[ErrorResponse | Session]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    room_id: str,
    session_id: str,
    *,
    client: AuthenticatedClient,
    body: RenameRequest,

) -> Response[ErrorResponse | Session]:
    """ Renames the session (also announced as `session.updated`, reason `renamed`). A session started
    without a title is named by its first turn's first words (`session.updated`, reason `titled`).

    Args:
        room_id (str):
        session_id (str):
        body (RenameRequest): `PATCH /v1/rooms/{roomId}/sessions/{sessionId}`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorResponse | Session]
     """


    kwargs = _get_kwargs(
        room_id=room_id,
session_id=session_id,
body=body,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    room_id: str,
    session_id: str,
    *,
    client: AuthenticatedClient,
    body: RenameRequest,

) -> ErrorResponse | Session | None:
    """ Renames the session (also announced as `session.updated`, reason `renamed`). A session started
    without a title is named by its first turn's first words (`session.updated`, reason `titled`).

    Args:
        room_id (str):
        session_id (str):
        body (RenameRequest): `PATCH /v1/rooms/{roomId}/sessions/{sessionId}`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorResponse | Session
     """


    return sync_detailed(
        room_id=room_id,
session_id=session_id,
client=client,
body=body,

    ).parsed

async def asyncio_detailed(
    room_id: str,
    session_id: str,
    *,
    client: AuthenticatedClient,
    body: RenameRequest,

) -> Response[ErrorResponse | Session]:
    """ Renames the session (also announced as `session.updated`, reason `renamed`). A session started
    without a title is named by its first turn's first words (`session.updated`, reason `titled`).

    Args:
        room_id (str):
        session_id (str):
        body (RenameRequest): `PATCH /v1/rooms/{roomId}/sessions/{sessionId}`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorResponse | Session]
     """


    kwargs = _get_kwargs(
        room_id=room_id,
session_id=session_id,
body=body,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    room_id: str,
    session_id: str,
    *,
    client: AuthenticatedClient,
    body: RenameRequest,

) -> ErrorResponse | Session | None:
    """ Renames the session (also announced as `session.updated`, reason `renamed`). A session started
    without a title is named by its first turn's first words (`session.updated`, reason `titled`).

    Args:
        room_id (str):
        session_id (str):
        body (RenameRequest): `PATCH /v1/rooms/{roomId}/sessions/{sessionId}`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorResponse | Session
     """


    return (await asyncio_detailed(
        room_id=room_id,
session_id=session_id,
client=client,
body=body,

    )).parsed
