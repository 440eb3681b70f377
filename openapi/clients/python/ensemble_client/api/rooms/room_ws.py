from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.error_frame import ErrorFrame
from ...models.error_response import ErrorResponse
from ...models.event_frame import EventFrame
from ...models.hello_frame import HelloFrame
from ...models.pong_frame import PongFrame
from ...models.resync_frame import ResyncFrame
from ...models.side_event_frame import SideEventFrame
from ...types import UNSET, Unset
from typing import cast



def _get_kwargs(
    room_id: str,
    *,
    after: int | Unset = UNSET,

) -> dict[str, Any]:
    

    

    params: dict[str, Any] = {}

    params["after"] = after


    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}


    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/rooms/{room_id}/ws".format(room_id=quote(str(room_id), safe=""),),
        "params": params,
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> ErrorFrame | EventFrame | HelloFrame | PongFrame | ResyncFrame | SideEventFrame | ErrorResponse | None:
    if response.status_code == 101:
        def _parse_response_101(data: object) -> ErrorFrame | EventFrame | HelloFrame | PongFrame | ResyncFrame | SideEventFrame:
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_server_frame_type_0 = HelloFrame.from_dict(data)



                return componentsschemas_server_frame_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_server_frame_type_1 = EventFrame.from_dict(data)



                return componentsschemas_server_frame_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_server_frame_type_2 = SideEventFrame.from_dict(data)



                return componentsschemas_server_frame_type_2
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_server_frame_type_3 = ResyncFrame.from_dict(data)



                return componentsschemas_server_frame_type_3
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_server_frame_type_4 = PongFrame.from_dict(data)



                return componentsschemas_server_frame_type_4
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            if not isinstance(data, dict):
                raise TypeError()
            componentsschemas_server_frame_type_5 = ErrorFrame.from_dict(data)



            return componentsschemas_server_frame_type_5

        response_101 = _parse_response_101(response.json())

        return response_101

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[ErrorFrame | EventFrame | HelloFrame | PongFrame | ResyncFrame | SideEventFrame | ErrorResponse]:
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
    after: int | Unset = UNSET,

) -> Response[ErrorFrame | EventFrame | HelloFrame | PongFrame | ResyncFrame | SideEventFrame | ErrorResponse]:
    """ The room's live WebSocket (see the contract's "Room WebSocket").

    Args:
        room_id (str):
        after (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorFrame | EventFrame | HelloFrame | PongFrame | ResyncFrame | SideEventFrame | ErrorResponse]
     """


    kwargs = _get_kwargs(
        room_id=room_id,
after=after,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    room_id: str,
    *,
    client: AuthenticatedClient,
    after: int | Unset = UNSET,

) -> ErrorFrame | EventFrame | HelloFrame | PongFrame | ResyncFrame | SideEventFrame | ErrorResponse | None:
    """ The room's live WebSocket (see the contract's "Room WebSocket").

    Args:
        room_id (str):
        after (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorFrame | EventFrame | HelloFrame | PongFrame | ResyncFrame | SideEventFrame | ErrorResponse
     """


    return sync_detailed(
        room_id=room_id,
client=client,
after=after,

    ).parsed

async def asyncio_detailed(
    room_id: str,
    *,
    client: AuthenticatedClient,
    after: int | Unset = UNSET,

) -> Response[ErrorFrame | EventFrame | HelloFrame | PongFrame | ResyncFrame | SideEventFrame | ErrorResponse]:
    """ The room's live WebSocket (see the contract's "Room WebSocket").

    Args:
        room_id (str):
        after (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorFrame | EventFrame | HelloFrame | PongFrame | ResyncFrame | SideEventFrame | ErrorResponse]
     """


    kwargs = _get_kwargs(
        room_id=room_id,
after=after,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    room_id: str,
    *,
    client: AuthenticatedClient,
    after: int | Unset = UNSET,

) -> ErrorFrame | EventFrame | HelloFrame | PongFrame | ResyncFrame | SideEventFrame | ErrorResponse | None:
    """ The room's live WebSocket (see the contract's "Room WebSocket").

    Args:
        room_id (str):
        after (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorFrame | EventFrame | HelloFrame | PongFrame | ResyncFrame | SideEventFrame | ErrorResponse
     """


    return (await asyncio_detailed(
        room_id=room_id,
client=client,
after=after,

    )).parsed
