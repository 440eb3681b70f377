from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.error_response import ErrorResponse
from ...types import UNSET, Unset
from typing import cast



def _get_kwargs(
    room_id: str,
    session_id: str,
    *,
    purge: bool | Unset = UNSET,
    force: bool | Unset = UNSET,

) -> dict[str, Any]:
    

    

    params: dict[str, Any] = {}

    params["purge"] = purge

    params["force"] = force


    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}


    _kwargs: dict[str, Any] = {
        "method": "delete",
        "url": "/v1/rooms/{room_id}/sessions/{session_id}".format(room_id=quote(str(room_id), safe=""),session_id=quote(str(session_id), safe=""),),
        "params": params,
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Any | ErrorResponse | None:
    if response.status_code == 204:
        response_204 = cast(Any, None)
        return response_204

    if response.status_code == 409:
        response_409 = ErrorResponse.from_dict(response.json())



        return response_409

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Any | ErrorResponse]:
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
    purge: bool | Unset = UNSET,
    force: bool | Unset = UNSET,

) -> Response[Any | ErrorResponse]:
    """ Closes a session. Idempotent. With `purge`, its workspace goes too: the worktree and the
    checkpoints' refs (the branch only when merged, unless `force`: else 409 `branch_not_merged`,
    the worktree removed and the branch kept).

    Args:
        room_id (str):
        session_id (str):
        purge (bool | Unset):
        force (bool | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | ErrorResponse]
     """


    kwargs = _get_kwargs(
        room_id=room_id,
session_id=session_id,
purge=purge,
force=force,

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
    purge: bool | Unset = UNSET,
    force: bool | Unset = UNSET,

) -> Any | ErrorResponse | None:
    """ Closes a session. Idempotent. With `purge`, its workspace goes too: the worktree and the
    checkpoints' refs (the branch only when merged, unless `force`: else 409 `branch_not_merged`,
    the worktree removed and the branch kept).

    Args:
        room_id (str):
        session_id (str):
        purge (bool | Unset):
        force (bool | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | ErrorResponse
     """


    return sync_detailed(
        room_id=room_id,
session_id=session_id,
client=client,
purge=purge,
force=force,

    ).parsed

async def asyncio_detailed(
    room_id: str,
    session_id: str,
    *,
    client: AuthenticatedClient,
    purge: bool | Unset = UNSET,
    force: bool | Unset = UNSET,

) -> Response[Any | ErrorResponse]:
    """ Closes a session. Idempotent. With `purge`, its workspace goes too: the worktree and the
    checkpoints' refs (the branch only when merged, unless `force`: else 409 `branch_not_merged`,
    the worktree removed and the branch kept).

    Args:
        room_id (str):
        session_id (str):
        purge (bool | Unset):
        force (bool | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | ErrorResponse]
     """


    kwargs = _get_kwargs(
        room_id=room_id,
session_id=session_id,
purge=purge,
force=force,

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
    purge: bool | Unset = UNSET,
    force: bool | Unset = UNSET,

) -> Any | ErrorResponse | None:
    """ Closes a session. Idempotent. With `purge`, its workspace goes too: the worktree and the
    checkpoints' refs (the branch only when merged, unless `force`: else 409 `branch_not_merged`,
    the worktree removed and the branch kept).

    Args:
        room_id (str):
        session_id (str):
        purge (bool | Unset):
        force (bool | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | ErrorResponse
     """


    return (await asyncio_detailed(
        room_id=room_id,
session_id=session_id,
client=client,
purge=purge,
force=force,

    )).parsed
