from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.error_response import ErrorResponse
from ...models.queue_list import QueueList
from ...models.queue_order import QueueOrder
from typing import cast



def _get_kwargs(
    room_id: str,
    session_id: str,
    *,
    body: QueueOrder,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}


    

    

    _kwargs: dict[str, Any] = {
        "method": "put",
        "url": "/v1/rooms/{room_id}/sessions/{session_id}/queue".format(room_id=quote(str(room_id), safe=""),session_id=quote(str(session_id), safe=""),),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> ErrorResponse | QueueList | None:
    if response.status_code == 200:
        response_200 = QueueList.from_dict(response.json())



        return response_200

    if response.status_code == 400:
        response_400 = ErrorResponse.from_dict(response.json())



        return response_400

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[ErrorResponse | QueueList]:
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
    body: QueueOrder,

) -> Response[ErrorResponse | QueueList]:
    """ Puts the queue in a new order.

    Args:
        room_id (str):
        session_id (str):
        body (QueueOrder): `PUT …/queue`: the queue's new order.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorResponse | QueueList]
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
    body: QueueOrder,

) -> ErrorResponse | QueueList | None:
    """ Puts the queue in a new order.

    Args:
        room_id (str):
        session_id (str):
        body (QueueOrder): `PUT …/queue`: the queue's new order.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorResponse | QueueList
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
    body: QueueOrder,

) -> Response[ErrorResponse | QueueList]:
    """ Puts the queue in a new order.

    Args:
        room_id (str):
        session_id (str):
        body (QueueOrder): `PUT …/queue`: the queue's new order.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorResponse | QueueList]
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
    body: QueueOrder,

) -> ErrorResponse | QueueList | None:
    """ Puts the queue in a new order.

    Args:
        room_id (str):
        session_id (str):
        body (QueueOrder): `PUT …/queue`: the queue's new order.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorResponse | QueueList
     """


    return (await asyncio_detailed(
        room_id=room_id,
session_id=session_id,
client=client,
body=body,

    )).parsed
