from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.create_token import CreateToken
from ...models.created_token import CreatedToken
from ...models.error_response import ErrorResponse
from typing import cast



def _get_kwargs(
    *,
    body: CreateToken,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}


    

    

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/tokens",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> CreatedToken | ErrorResponse | None:
    if response.status_code == 201:
        response_201 = CreatedToken.from_dict(response.json())



        return response_201

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[CreatedToken | ErrorResponse]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    body: CreateToken,

) -> Response[CreatedToken | ErrorResponse]:
    """ Makes a token with a role and rooms (admin). Its secret is in this answer only. It expires no
    later than the token that made it (a later or absent expiry is cut to the maker's) and is
    revoked with it. The name `admin` is reserved for the token file's token.

    Args:
        body (CreateToken): `POST /v1/tokens`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[CreatedToken | ErrorResponse]
     """


    kwargs = _get_kwargs(
        body=body,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    *,
    client: AuthenticatedClient,
    body: CreateToken,

) -> CreatedToken | ErrorResponse | None:
    """ Makes a token with a role and rooms (admin). Its secret is in this answer only. It expires no
    later than the token that made it (a later or absent expiry is cut to the maker's) and is
    revoked with it. The name `admin` is reserved for the token file's token.

    Args:
        body (CreateToken): `POST /v1/tokens`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        CreatedToken | ErrorResponse
     """


    return sync_detailed(
        client=client,
body=body,

    ).parsed

async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    body: CreateToken,

) -> Response[CreatedToken | ErrorResponse]:
    """ Makes a token with a role and rooms (admin). Its secret is in this answer only. It expires no
    later than the token that made it (a later or absent expiry is cut to the maker's) and is
    revoked with it. The name `admin` is reserved for the token file's token.

    Args:
        body (CreateToken): `POST /v1/tokens`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[CreatedToken | ErrorResponse]
     """


    kwargs = _get_kwargs(
        body=body,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    *,
    client: AuthenticatedClient,
    body: CreateToken,

) -> CreatedToken | ErrorResponse | None:
    """ Makes a token with a role and rooms (admin). Its secret is in this answer only. It expires no
    later than the token that made it (a later or absent expiry is cut to the maker's) and is
    revoked with it. The name `admin` is reserved for the token file's token.

    Args:
        body (CreateToken): `POST /v1/tokens`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        CreatedToken | ErrorResponse
     """


    return (await asyncio_detailed(
        client=client,
body=body,

    )).parsed
