from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.error_response import ErrorResponse
from ...models.get_session_wait import GetSessionWait
from ...models.session import Session
from ...types import UNSET, Unset
from typing import cast



def _get_kwargs(
    room_id: str,
    session_id: str,
    *,
    wait: GetSessionWait | Unset = UNSET,
    timeout_secs: int | Unset = UNSET,

) -> dict[str, Any]:
    

    

    params: dict[str, Any] = {}

    json_wait: str | Unset = UNSET
    if not isinstance(wait, Unset):
        json_wait = wait.value

    params["wait"] = json_wait

    params["timeoutSecs"] = timeout_secs


    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}


    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/rooms/{room_id}/sessions/{session_id}".format(room_id=quote(str(room_id), safe=""),session_id=quote(str(session_id), safe=""),),
        "params": params,
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> ErrorResponse | Session | None:
    if response.status_code == 200:
        response_200 = Session.from_dict(response.json())



        return response_200

    if response.status_code == 401:
        response_401 = ErrorResponse.from_dict(response.json())



        return response_401

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[ErrorResponse | Session]:
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
    wait: GetSessionWait | Unset = UNSET,
    timeout_secs: int | Unset = UNSET,

) -> Response[ErrorResponse | Session]:
    """ One session (side sessions too). With `wait`, answered once the session is idle (or waits on
    an answer), so a script can run a turn and then read its result; the `Ensemble-Wait` header
    says why it answered.

    Args:
        room_id (str):
        session_id (str):
        wait (GetSessionWait | Unset): What `GET …/sessions/{id}?wait=` waits for.
        timeout_secs (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorResponse | Session]
     """


    kwargs = _get_kwargs(
        room_id=room_id,
session_id=session_id,
wait=wait,
timeout_secs=timeout_secs,

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
    wait: GetSessionWait | Unset = UNSET,
    timeout_secs: int | Unset = UNSET,

) -> ErrorResponse | Session | None:
    """ One session (side sessions too). With `wait`, answered once the session is idle (or waits on
    an answer), so a script can run a turn and then read its result; the `Ensemble-Wait` header
    says why it answered.

    Args:
        room_id (str):
        session_id (str):
        wait (GetSessionWait | Unset): What `GET …/sessions/{id}?wait=` waits for.
        timeout_secs (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorResponse | Session
     """


    return sync_detailed(
        room_id=room_id,
session_id=session_id,
client=client,
wait=wait,
timeout_secs=timeout_secs,

    ).parsed

async def asyncio_detailed(
    room_id: str,
    session_id: str,
    *,
    client: AuthenticatedClient,
    wait: GetSessionWait | Unset = UNSET,
    timeout_secs: int | Unset = UNSET,

) -> Response[ErrorResponse | Session]:
    """ One session (side sessions too). With `wait`, answered once the session is idle (or waits on
    an answer), so a script can run a turn and then read its result; the `Ensemble-Wait` header
    says why it answered.

    Args:
        room_id (str):
        session_id (str):
        wait (GetSessionWait | Unset): What `GET …/sessions/{id}?wait=` waits for.
        timeout_secs (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorResponse | Session]
     """


    kwargs = _get_kwargs(
        room_id=room_id,
session_id=session_id,
wait=wait,
timeout_secs=timeout_secs,

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
    wait: GetSessionWait | Unset = UNSET,
    timeout_secs: int | Unset = UNSET,

) -> ErrorResponse | Session | None:
    """ One session (side sessions too). With `wait`, answered once the session is idle (or waits on
    an answer), so a script can run a turn and then read its result; the `Ensemble-Wait` header
    says why it answered.

    Args:
        room_id (str):
        session_id (str):
        wait (GetSessionWait | Unset): What `GET …/sessions/{id}?wait=` waits for.
        timeout_secs (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorResponse | Session
     """


    return (await asyncio_detailed(
        room_id=room_id,
session_id=session_id,
client=client,
wait=wait,
timeout_secs=timeout_secs,

    )).parsed
