from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.error_response import ErrorResponse
from ...models.provider_session_list import ProviderSessionList
from ...types import UNSET, Unset
from typing import cast



def _get_kwargs(
    provider_id: str,
    *,
    cwd: str | Unset = UNSET,
    cursor: str | Unset = UNSET,

) -> dict[str, Any]:
    

    

    params: dict[str, Any] = {}

    params["cwd"] = cwd

    params["cursor"] = cursor


    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}


    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/providers/{provider_id}/sessions".format(provider_id=quote(str(provider_id), safe=""),),
        "params": params,
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> ErrorResponse | ProviderSessionList | None:
    if response.status_code == 200:
        response_200 = ProviderSessionList.from_dict(response.json())



        return response_200

    if response.status_code == 404:
        response_404 = ErrorResponse.from_dict(response.json())



        return response_404

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[ErrorResponse | ProviderSessionList]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    provider_id: str,
    *,
    client: AuthenticatedClient,
    cwd: str | Unset = UNSET,
    cursor: str | Unset = UNSET,

) -> Response[ErrorResponse | ProviderSessionList]:
    """ The agent's own earlier sessions of a directory (ACP `session/list`, for an agent that
    advertises it): a session of a room continues one with `providerSessionId` in
    `POST …/sessions`. The agent is started for the question, then stopped.

    Args:
        provider_id (str):
        cwd (str | Unset):
        cursor (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorResponse | ProviderSessionList]
     """


    kwargs = _get_kwargs(
        provider_id=provider_id,
cwd=cwd,
cursor=cursor,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    provider_id: str,
    *,
    client: AuthenticatedClient,
    cwd: str | Unset = UNSET,
    cursor: str | Unset = UNSET,

) -> ErrorResponse | ProviderSessionList | None:
    """ The agent's own earlier sessions of a directory (ACP `session/list`, for an agent that
    advertises it): a session of a room continues one with `providerSessionId` in
    `POST …/sessions`. The agent is started for the question, then stopped.

    Args:
        provider_id (str):
        cwd (str | Unset):
        cursor (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorResponse | ProviderSessionList
     """


    return sync_detailed(
        provider_id=provider_id,
client=client,
cwd=cwd,
cursor=cursor,

    ).parsed

async def asyncio_detailed(
    provider_id: str,
    *,
    client: AuthenticatedClient,
    cwd: str | Unset = UNSET,
    cursor: str | Unset = UNSET,

) -> Response[ErrorResponse | ProviderSessionList]:
    """ The agent's own earlier sessions of a directory (ACP `session/list`, for an agent that
    advertises it): a session of a room continues one with `providerSessionId` in
    `POST …/sessions`. The agent is started for the question, then stopped.

    Args:
        provider_id (str):
        cwd (str | Unset):
        cursor (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorResponse | ProviderSessionList]
     """


    kwargs = _get_kwargs(
        provider_id=provider_id,
cwd=cwd,
cursor=cursor,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    provider_id: str,
    *,
    client: AuthenticatedClient,
    cwd: str | Unset = UNSET,
    cursor: str | Unset = UNSET,

) -> ErrorResponse | ProviderSessionList | None:
    """ The agent's own earlier sessions of a directory (ACP `session/list`, for an agent that
    advertises it): a session of a room continues one with `providerSessionId` in
    `POST …/sessions`. The agent is started for the question, then stopped.

    Args:
        provider_id (str):
        cwd (str | Unset):
        cursor (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorResponse | ProviderSessionList
     """


    return (await asyncio_detailed(
        provider_id=provider_id,
client=client,
cwd=cwd,
cursor=cursor,

    )).parsed
