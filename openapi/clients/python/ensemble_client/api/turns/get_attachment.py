from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.error_response import ErrorResponse
from ...types import File, FileTypes
from io import BytesIO
from typing import cast



def _get_kwargs(
    room_id: str,
    session_id: str,
    attachment: str,

) -> dict[str, Any]:
    

    

    

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/rooms/{room_id}/sessions/{session_id}/attachments/{attachment}".format(room_id=quote(str(room_id), safe=""),session_id=quote(str(session_id), safe=""),attachment=quote(str(attachment), safe=""),),
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> ErrorResponse | File | None:
    if response.status_code == 200:
        response_200 = File(
             payload = BytesIO(response.content)
        )



        return response_200

    if response.status_code == 404:
        response_404 = ErrorResponse.from_dict(response.json())



        return response_404

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[ErrorResponse | File]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    room_id: str,
    session_id: str,
    attachment: str,
    *,
    client: AuthenticatedClient,

) -> Response[ErrorResponse | File]:
    """ An image of one of the session's turns (its `attachment` in the turn's input), with its type.

    Args:
        room_id (str):
        session_id (str):
        attachment (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorResponse | File]
     """


    kwargs = _get_kwargs(
        room_id=room_id,
session_id=session_id,
attachment=attachment,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    room_id: str,
    session_id: str,
    attachment: str,
    *,
    client: AuthenticatedClient,

) -> ErrorResponse | File | None:
    """ An image of one of the session's turns (its `attachment` in the turn's input), with its type.

    Args:
        room_id (str):
        session_id (str):
        attachment (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorResponse | File
     """


    return sync_detailed(
        room_id=room_id,
session_id=session_id,
attachment=attachment,
client=client,

    ).parsed

async def asyncio_detailed(
    room_id: str,
    session_id: str,
    attachment: str,
    *,
    client: AuthenticatedClient,

) -> Response[ErrorResponse | File]:
    """ An image of one of the session's turns (its `attachment` in the turn's input), with its type.

    Args:
        room_id (str):
        session_id (str):
        attachment (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorResponse | File]
     """


    kwargs = _get_kwargs(
        room_id=room_id,
session_id=session_id,
attachment=attachment,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    room_id: str,
    session_id: str,
    attachment: str,
    *,
    client: AuthenticatedClient,

) -> ErrorResponse | File | None:
    """ An image of one of the session's turns (its `attachment` in the turn's input), with its type.

    Args:
        room_id (str):
        session_id (str):
        attachment (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorResponse | File
     """


    return (await asyncio_detailed(
        room_id=room_id,
session_id=session_id,
attachment=attachment,
client=client,

    )).parsed
