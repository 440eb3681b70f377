from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.error_response import ErrorResponse
from ...models.left_worktree_list import LeftWorktreeList
from typing import cast



def _get_kwargs(
    room_id: str,

) -> dict[str, Any]:
    

    

    

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/rooms/{room_id}/worktrees".format(room_id=quote(str(room_id), safe=""),),
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> ErrorResponse | LeftWorktreeList | None:
    if response.status_code == 200:
        response_200 = LeftWorktreeList.from_dict(response.json())



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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[ErrorResponse | LeftWorktreeList]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    room_id: str,
    *,
    client: AuthenticatedClient,

) -> Response[ErrorResponse | LeftWorktreeList]:
    """ The worktrees the room's closed sessions left on disk (closed without `purge`), oldest close
    first, each with what it takes: remove one with `DELETE …/sessions/{sessionId}?purge=true`.
    (With several hosts, those of the sessions this host holds.)

    Args:
        room_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorResponse | LeftWorktreeList]
     """


    kwargs = _get_kwargs(
        room_id=room_id,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    room_id: str,
    *,
    client: AuthenticatedClient,

) -> ErrorResponse | LeftWorktreeList | None:
    """ The worktrees the room's closed sessions left on disk (closed without `purge`), oldest close
    first, each with what it takes: remove one with `DELETE …/sessions/{sessionId}?purge=true`.
    (With several hosts, those of the sessions this host holds.)

    Args:
        room_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorResponse | LeftWorktreeList
     """


    return sync_detailed(
        room_id=room_id,
client=client,

    ).parsed

async def asyncio_detailed(
    room_id: str,
    *,
    client: AuthenticatedClient,

) -> Response[ErrorResponse | LeftWorktreeList]:
    """ The worktrees the room's closed sessions left on disk (closed without `purge`), oldest close
    first, each with what it takes: remove one with `DELETE …/sessions/{sessionId}?purge=true`.
    (With several hosts, those of the sessions this host holds.)

    Args:
        room_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorResponse | LeftWorktreeList]
     """


    kwargs = _get_kwargs(
        room_id=room_id,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    room_id: str,
    *,
    client: AuthenticatedClient,

) -> ErrorResponse | LeftWorktreeList | None:
    """ The worktrees the room's closed sessions left on disk (closed without `purge`), oldest close
    first, each with what it takes: remove one with `DELETE …/sessions/{sessionId}?purge=true`.
    (With several hosts, those of the sessions this host holds.)

    Args:
        room_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorResponse | LeftWorktreeList
     """


    return (await asyncio_detailed(
        room_id=room_id,
client=client,

    )).parsed
