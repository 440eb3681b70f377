from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.error_response import ErrorResponse
from ...models.event_list import EventList
from ...types import UNSET, Unset
from typing import cast



def _get_kwargs(
    room_id: str,
    session_id: str,
    *,
    after: int | Unset = UNSET,
    before: int | Unset = UNSET,
    limit: int | Unset = UNSET,

) -> dict[str, Any]:
    

    

    params: dict[str, Any] = {}

    params["after"] = after

    params["before"] = before

    params["limit"] = limit


    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}


    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/rooms/{room_id}/sessions/{session_id}/events".format(room_id=quote(str(room_id), safe=""),session_id=quote(str(session_id), safe=""),),
        "params": params,
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> ErrorResponse | EventList | None:
    if response.status_code == 200:
        response_200 = EventList.from_dict(response.json())



        return response_200

    if response.status_code == 410:
        response_410 = ErrorResponse.from_dict(response.json())



        return response_410

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[ErrorResponse | EventList]:
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
    after: int | Unset = UNSET,
    before: int | Unset = UNSET,
    limit: int | Unset = UNSET,

) -> Response[ErrorResponse | EventList]:
    """ A page of one session's events, oldest first: forwards with `after` (default 0), or its tail
    and older pages backwards with `before` (`prev` names the next older page). A canonical
    session's are read from the store by session, so its tail costs the page, not the room's
    history; a side conversation's are its own seqs, kept in memory while it lives. Paged as the
    room's (`limit`, `--events-page-bytes`). The whole room's log is `/v1/rooms/{roomId}/events`.

    Args:
        room_id (str):
        session_id (str):
        after (int | Unset):
        before (int | Unset):
        limit (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorResponse | EventList]
     """


    kwargs = _get_kwargs(
        room_id=room_id,
session_id=session_id,
after=after,
before=before,
limit=limit,

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
    after: int | Unset = UNSET,
    before: int | Unset = UNSET,
    limit: int | Unset = UNSET,

) -> ErrorResponse | EventList | None:
    """ A page of one session's events, oldest first: forwards with `after` (default 0), or its tail
    and older pages backwards with `before` (`prev` names the next older page). A canonical
    session's are read from the store by session, so its tail costs the page, not the room's
    history; a side conversation's are its own seqs, kept in memory while it lives. Paged as the
    room's (`limit`, `--events-page-bytes`). The whole room's log is `/v1/rooms/{roomId}/events`.

    Args:
        room_id (str):
        session_id (str):
        after (int | Unset):
        before (int | Unset):
        limit (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorResponse | EventList
     """


    return sync_detailed(
        room_id=room_id,
session_id=session_id,
client=client,
after=after,
before=before,
limit=limit,

    ).parsed

async def asyncio_detailed(
    room_id: str,
    session_id: str,
    *,
    client: AuthenticatedClient,
    after: int | Unset = UNSET,
    before: int | Unset = UNSET,
    limit: int | Unset = UNSET,

) -> Response[ErrorResponse | EventList]:
    """ A page of one session's events, oldest first: forwards with `after` (default 0), or its tail
    and older pages backwards with `before` (`prev` names the next older page). A canonical
    session's are read from the store by session, so its tail costs the page, not the room's
    history; a side conversation's are its own seqs, kept in memory while it lives. Paged as the
    room's (`limit`, `--events-page-bytes`). The whole room's log is `/v1/rooms/{roomId}/events`.

    Args:
        room_id (str):
        session_id (str):
        after (int | Unset):
        before (int | Unset):
        limit (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorResponse | EventList]
     """


    kwargs = _get_kwargs(
        room_id=room_id,
session_id=session_id,
after=after,
before=before,
limit=limit,

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
    after: int | Unset = UNSET,
    before: int | Unset = UNSET,
    limit: int | Unset = UNSET,

) -> ErrorResponse | EventList | None:
    """ A page of one session's events, oldest first: forwards with `after` (default 0), or its tail
    and older pages backwards with `before` (`prev` names the next older page). A canonical
    session's are read from the store by session, so its tail costs the page, not the room's
    history; a side conversation's are its own seqs, kept in memory while it lives. Paged as the
    room's (`limit`, `--events-page-bytes`). The whole room's log is `/v1/rooms/{roomId}/events`.

    Args:
        room_id (str):
        session_id (str):
        after (int | Unset):
        before (int | Unset):
        limit (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorResponse | EventList
     """


    return (await asyncio_detailed(
        room_id=room_id,
session_id=session_id,
client=client,
after=after,
before=before,
limit=limit,

    )).parsed
