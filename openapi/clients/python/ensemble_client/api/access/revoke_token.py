from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.error_response import ErrorResponse
from ...models.token_info import TokenInfo
from typing import cast



def _get_kwargs(
    token_id: str,

) -> dict[str, Any]:
    

    

    

    _kwargs: dict[str, Any] = {
        "method": "delete",
        "url": "/v1/tokens/{token_id}".format(token_id=quote(str(token_id), safe=""),),
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> ErrorResponse | TokenInfo | None:
    if response.status_code == 200:
        response_200 = TokenInfo.from_dict(response.json())



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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[ErrorResponse | TokenInfo]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    token_id: str,
    *,
    client: AuthenticatedClient,

) -> Response[ErrorResponse | TokenInfo]:
    """ Revokes a token at once (admin), and every token it made, transitively: their requests fail
    from now on, their room WebSockets close with code 4003, their long polls answer 401 and their
    exports stop.

    Args:
        token_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorResponse | TokenInfo]
     """


    kwargs = _get_kwargs(
        token_id=token_id,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    token_id: str,
    *,
    client: AuthenticatedClient,

) -> ErrorResponse | TokenInfo | None:
    """ Revokes a token at once (admin), and every token it made, transitively: their requests fail
    from now on, their room WebSockets close with code 4003, their long polls answer 401 and their
    exports stop.

    Args:
        token_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorResponse | TokenInfo
     """


    return sync_detailed(
        token_id=token_id,
client=client,

    ).parsed

async def asyncio_detailed(
    token_id: str,
    *,
    client: AuthenticatedClient,

) -> Response[ErrorResponse | TokenInfo]:
    """ Revokes a token at once (admin), and every token it made, transitively: their requests fail
    from now on, their room WebSockets close with code 4003, their long polls answer 401 and their
    exports stop.

    Args:
        token_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorResponse | TokenInfo]
     """


    kwargs = _get_kwargs(
        token_id=token_id,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    token_id: str,
    *,
    client: AuthenticatedClient,

) -> ErrorResponse | TokenInfo | None:
    """ Revokes a token at once (admin), and every token it made, transitively: their requests fail
    from now on, their room WebSockets close with code 4003, their long polls answer 401 and their
    exports stop.

    Args:
        token_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorResponse | TokenInfo
     """


    return (await asyncio_detailed(
        token_id=token_id,
client=client,

    )).parsed
