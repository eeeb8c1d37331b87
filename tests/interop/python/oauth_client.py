#!/usr/bin/env python3
"""The official MCP Python SDK's OAuth client (mcp==2.3.0, OAuthClientProvider) against
Cairn, as an agent connects to a remote MCP server knowing only its URL: the 401 names the
protected-resource metadata, which names the authorization server; the client registers
itself (RFC 7591), sends the person to the authorization URL, where the person allows it —
here posted as the consent screen posts it, with the person's session cookie — exchanges
the code with its PKCE verifier, lists the tools and saves a page; then its access token
runs out and it refreshes; then the person disconnects it and its next call fails.

Usage: python oauth_client.py MCP_URL SESSION_COOKIE     Exit code 0 = pass.
"""

import asyncio
import json
import sys
import time
from urllib.parse import parse_qs, urlencode, urlparse

import httpx2
from mcp import ClientSession
from mcp.client.auth import OAuthClientProvider, TokenStorage
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

url, cookie = sys.argv[1], sys.argv[2]
base = url.rsplit("/api/mcp", 1)[0]
person = httpx2.AsyncClient(base_url=base, cookies={"cairn_session": cookie}, timeout=30)


class Memory(TokenStorage):
    def __init__(self):
        self.tokens = None
        self.client = None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken):
        self.tokens = tokens

    async def get_client_info(self):
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull):
        self.client = client_info


consents = []
answer = {}
asked_again = []


async def approve(authorization_url: str):
    """The person opens the authorization URL in the browser and clicks Allow."""
    if consents:
        asked_again.append(authorization_url)
        raise RuntimeError("asked to consent again: the person disconnected this app")
    res = await person.get(authorization_url, follow_redirects=False)
    assert res.status_code == 303, res.text
    screen = urlparse(res.headers["location"])
    assert screen.path == "/app/-/authorize", screen
    request = {k: v[0] for k, v in parse_qs(screen.query).items()}
    asked = await person.get("/api/oauth/consent?" + urlencode(request))
    assert asked.json()["client_name"] == "Python SDK agent", asked.text
    given = await person.post("/api/oauth/consent", json={**request, "allow": True}, headers={"Origin": base})
    assert given.status_code == 200, given.text
    back = parse_qs(urlparse(given.json()["redirect"]).query)
    answer.update(code=back["code"][0], state=back["state"][0], iss=back.get("iss", [None])[0])
    consents.append(authorization_url)


async def callback():
    return AuthorizationCodeResult(**answer)


async def main():
    storage = Memory()
    auth = OAuthClientProvider(
        server_url=url,
        client_metadata=OAuthClientMetadata(
            client_name="Python SDK agent",
            redirect_uris=["http://127.0.0.1:33418/callback"],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",
        ),
        storage=storage,
        redirect_handler=approve,
        callback_handler=callback,
    )
    async with httpx2.AsyncClient(auth=auth, timeout=30) as http:
        async with streamable_http_client(url, http_client=http) as (read, write):
            async with ClientSession(read, write) as s:
                await s.initialize()
                tools = (await s.list_tools()).tools
                assert len(tools) == 27, len(tools)
                assert len(consents) == 1
                first = storage.tokens.access_token
                made = await s.call_tool("create_page", {"title": "Made by the Python agent", "content": "hi"})
                assert not made.is_error, made

                # The access token runs out: the client refreshes before its next call.
                auth.context.token_expiry_time = time.time() - 1
                await s.list_tools()
                assert storage.tokens.access_token != first, "refreshed"
                assert len(consents) == 1, "a refresh asks the person nothing"

    # The person disconnects the app: its next call is refused, its refresh token too, and
    # it can only ask the person again (who says no).
    grants = (await person.get("/api/oauth/grants")).json()["items"]
    mine = [g for g in grants if g["client_name"] == "Python SDK agent"]
    assert len(mine) == 1, grants
    gone = await person.delete(f"/api/oauth/grants/{mine[0]['id']}", headers={"Origin": base})
    assert gone.status_code == 204, gone.text
    auth.context.token_expiry_time = time.time() + 3600
    try:
        async with httpx2.AsyncClient(auth=auth, timeout=30) as http:
            async with streamable_http_client(url, http_client=http) as (read, write):
                async with ClientSession(read, write) as s:
                    await s.initialize()
                    await s.list_tools()
    except BaseException as e:  # the transport's task group raises an ExceptionGroup
        print("after revocation:", type(e).__name__)
    else:
        raise AssertionError("a call after revocation succeeded")
    assert asked_again, "refused because the grant is gone"
    page = await person.get("/api/pages/made-by-the-python-agent")
    assert page.status_code == 200, page.text
    print("oauth interop passed")


asyncio.run(main())
