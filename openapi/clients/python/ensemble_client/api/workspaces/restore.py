from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.error_response import ErrorResponse
from ...models.restore_request import RestoreRequest
from ...models.workspace_restored_payload import WorkspaceRestoredPayload
from typing import cast



def _get_kwargs(
    room_id: str,
    session_id: str,
    *,
    body: RestoreRequest,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}


    

    

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/rooms/{room_id}/sessions/{session_id}/restore".format(room_id=quote(str(room_id), safe=""),session_id=quote(str(session_id), safe=""),),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> ErrorResponse | WorkspaceRestoredPayload | None:
    if response.status_code == 200:
        response_200 = WorkspaceRestoredPayload.from_dict(response.json())



        return response_200

    if response.status_code == 404:
        response_404 = ErrorResponse.from_dict(response.json())



        return response_404

    if response.status_code == 409:
        response_409 = ErrorResponse.from_dict(response.json())



        return response_409

    if response.status_code == 422:
        response_422 = ErrorResponse.from_dict(response.json())



        return response_422

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[ErrorResponse | WorkspaceRestoredPayload]:
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
    body: RestoreRequest,

) -> Response[ErrorResponse | WorkspaceRestoredPayload]:
    """ Puts the session's working tree back to a checkpoint. The tree as it was is checkpointed
    first (its id is `undo`: restore it to undo this); announced as `workspace.restored`.

    Args:
        room_id (str):
        session_id (str):
        body (RestoreRequest): `POST …/restore`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorResponse | WorkspaceRestoredPayload]
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
    body: RestoreRequest,

) -> ErrorResponse | WorkspaceRestoredPayload | None:
    """ Puts the session's working tree back to a checkpoint. The tree as it was is checkpointed
    first (its id is `undo`: restore it to undo this); announced as `workspace.restored`.

    Args:
        room_id (str):
        session_id (str):
        body (RestoreRequest): `POST …/restore`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorResponse | WorkspaceRestoredPayload
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
    body: RestoreRequest,

) -> Response[ErrorResponse | WorkspaceRestoredPayload]:
    """ Puts the session's working tree back to a checkpoint. The tree as it was is checkpointed
    first (its id is `undo`: restore it to undo this); announced as `workspace.restored`.

    Args:
        room_id (str):
        session_id (str):
        body (RestoreRequest): `POST …/restore`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorResponse | WorkspaceRestoredPayload]
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
    body: RestoreRequest,

) -> ErrorResponse | WorkspaceRestoredPayload | None:
    """ Puts the session's working tree back to a checkpoint. The tree as it was is checkpointed
    first (its id is `undo`: restore it to undo this); announced as `workspace.restored`.

    Args:
        room_id (str):
        session_id (str):
        body (RestoreRequest): `POST …/restore`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorResponse | WorkspaceRestoredPayload
     """


    return (await asyncio_detailed(
        room_id=room_id,
session_id=session_id,
client=client,
body=body,

    )).parsed
