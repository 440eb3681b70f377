from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.error_response import ErrorResponse
from ...models.session_present import SessionPresent
from typing import cast



def _get_kwargs(
    room_id: str,
    session_id: str,

) -> dict[str, Any]:
    

    

    

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/rooms/{room_id}/sessions/{session_id}/present".format(room_id=quote(str(room_id), safe=""),session_id=quote(str(session_id), safe=""),),
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> ErrorResponse | SessionPresent | None:
    if response.status_code == 200:
        response_200 = SessionPresent.from_dict(response.json())



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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[ErrorResponse | SessionPresent]:
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

) -> Response[ErrorResponse | SessionPresent]:
    """ The session as it is now — the session, its pending interactions, plan, goal, usage, queue,
    commands and what its running turn is streaming — to draw without reading its history, with
    the room's `headSeq` it includes every event through: open the room WebSocket at
    `after=headSeq` and read the session's tail with `…/events?before=headSeq+1`.

    Args:
        room_id (str):
        session_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorResponse | SessionPresent]
     """


    kwargs = _get_kwargs(
        room_id=room_id,
session_id=session_id,

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

) -> ErrorResponse | SessionPresent | None:
    """ The session as it is now — the session, its pending interactions, plan, goal, usage, queue,
    commands and what its running turn is streaming — to draw without reading its history, with
    the room's `headSeq` it includes every event through: open the room WebSocket at
    `after=headSeq` and read the session's tail with `…/events?before=headSeq+1`.

    Args:
        room_id (str):
        session_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorResponse | SessionPresent
     """


    return sync_detailed(
        room_id=room_id,
session_id=session_id,
client=client,

    ).parsed

async def asyncio_detailed(
    room_id: str,
    session_id: str,
    *,
    client: AuthenticatedClient,

) -> Response[ErrorResponse | SessionPresent]:
    """ The session as it is now — the session, its pending interactions, plan, goal, usage, queue,
    commands and what its running turn is streaming — to draw without reading its history, with
    the room's `headSeq` it includes every event through: open the room WebSocket at
    `after=headSeq` and read the session's tail with `…/events?before=headSeq+1`.

    Args:
        room_id (str):
        session_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorResponse | SessionPresent]
     """


    kwargs = _get_kwargs(
        room_id=room_id,
session_id=session_id,

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

) -> ErrorResponse | SessionPresent | None:
    """ The session as it is now — the session, its pending interactions, plan, goal, usage, queue,
    commands and what its running turn is streaming — to draw without reading its history, with
    the room's `headSeq` it includes every event through: open the room WebSocket at
    `after=headSeq` and read the session's tail with `…/events?before=headSeq+1`.

    Args:
        room_id (str):
        session_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorResponse | SessionPresent
     """


    return (await asyncio_detailed(
        room_id=room_id,
session_id=session_id,
client=client,

    )).parsed
