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
    client_submit_id: str | Unset = UNSET,

) -> dict[str, Any]:
    

    

    params: dict[str, Any] = {}

    params["clientSubmitId"] = client_submit_id


    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}


    _kwargs: dict[str, Any] = {
        "method": "delete",
        "url": "/v1/rooms/{room_id}/sessions/{session_id}/goal".format(room_id=quote(str(room_id), safe=""),session_id=quote(str(session_id), safe=""),),
        "params": params,
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Any | ErrorResponse | None:
    if response.status_code == 204:
        response_204 = cast(Any, None)
        return response_204

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
    client_submit_id: str | Unset = UNSET,

) -> Response[Any | ErrorResponse]:
    """ Clears the session's goal.

    Args:
        room_id (str):
        session_id (str):
        client_submit_id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | ErrorResponse]
     """


    kwargs = _get_kwargs(
        room_id=room_id,
session_id=session_id,
client_submit_id=client_submit_id,

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
    client_submit_id: str | Unset = UNSET,

) -> Any | ErrorResponse | None:
    """ Clears the session's goal.

    Args:
        room_id (str):
        session_id (str):
        client_submit_id (str | Unset):

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
client_submit_id=client_submit_id,

    ).parsed

async def asyncio_detailed(
    room_id: str,
    session_id: str,
    *,
    client: AuthenticatedClient,
    client_submit_id: str | Unset = UNSET,

) -> Response[Any | ErrorResponse]:
    """ Clears the session's goal.

    Args:
        room_id (str):
        session_id (str):
        client_submit_id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | ErrorResponse]
     """


    kwargs = _get_kwargs(
        room_id=room_id,
session_id=session_id,
client_submit_id=client_submit_id,

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
    client_submit_id: str | Unset = UNSET,

) -> Any | ErrorResponse | None:
    """ Clears the session's goal.

    Args:
        room_id (str):
        session_id (str):
        client_submit_id (str | Unset):

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
client_submit_id=client_submit_id,

    )).parsed
