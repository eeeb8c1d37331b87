#!/usr/bin/env python3
"""Cairn MCP interop client: the official Python SDK (mcp==2.3.0) against /api/mcp.

Proves that a stock MCP client can, over Streamable HTTP with a bearer token:
initialize (server "cairn" at the expected version), list exactly the 27 tools
with readOnlyHint + outputSchema, call tools whose JSON text equals their
structuredContent, drive a page through create/get/stale-update/update/append/
search/history/diff/trash/restore/purge, read the page as a resource, get a
JSON-RPC error for an unknown tool, and, via mcp.Client, connect with the
2026-07-28 protocol (server/discover, no initialize) and list the tools.

Usage: python client.py URL TOKEN VERSION     Exit code 0 = pass.
"""

import asyncio
import json
import sys
from urllib.parse import quote

import httpx2
from mcp import Client, ClientSession, MCPError
from mcp.client.streamable_http import streamable_http_client
from mcp.types import PaginatedRequestParams

LANG = "Python"
ZERO_REV = "0" * 40
TOOLS = set("""whoami list_workspaces list_pages list_recent_pages get_page create_page update_page
    append_to_page delete_page move_page rename_page list_children get_backlinks get_page_history
    get_page_revision diff_page_revisions restore_page_revision list_trash restore_from_trash
    purge_from_trash search suggest_links suggest_tags summarize_page get_insights get_graph list_tags""".split())
PAGE_KEYS = set("slug title content parent tags links revision created_at updated_at updated_by workspace".split())


class Fail(Exception):
    pass


step = "startup"
http_errors = []  # non-2xx HTTP responses, shown on failure (the SDK hides e.g. a 401 behind MCPError)


def check(cond, msg):
    if not cond:
        raise Fail(msg)


def pager(method):
    """Adapt a ClientSession list_* method to fetch(cursor)."""
    return lambda cursor: method(params=PaginatedRequestParams(cursor=cursor) if cursor else None)


def http_client(headers):
    async def note(resp):
        if resp.status_code >= 400:
            http_errors.append(f"HTTP {resp.status_code} on {resp.request.method} {resp.request.url}")
    return httpx2.AsyncClient(headers=headers, timeout=30, event_hooks={"response": [note]})


async def paged(fetch, attr):
    """Collect every item of a paginated list (tools/list, resources/list, ...)."""
    items, cursor = [], None
    while True:
        res = await fetch(cursor)
        items += getattr(res, attr)
        cursor = res.next_cursor
        if not cursor:
            return items


def check_tools(tools):
    names = [t.name for t in tools]
    check(len(names) == 27, f"expected 27 tools, got {len(names)}")
    check(set(names) == TOOLS, f"tool set differs: missing {sorted(TOOLS - set(names))}, "
                               f"extra {sorted(set(names) - TOOLS)}")
    for t in tools:
        check(t.annotations is not None and isinstance(t.annotations.read_only_hint, bool),
              f"tool {t.name} lacks a boolean annotations.readOnlyHint")
        check(isinstance(t.output_schema, dict), f"tool {t.name} lacks an outputSchema")


async def call(s, name, args):
    r = await s.call_tool(name, args)
    text = r.content[0].text if r.content and r.content[0].type == "text" else None
    check(not r.is_error, f"{name} returned isError: {text}")
    check(text is not None, f"{name}: content[0] is not a text block")
    check(json.loads(text) == r.structured_content,
          f"{name}: content[0].text JSON != structuredContent\n{text}\n{r.structured_content}")
    return r.structured_content


async def call_err(s, name, args):
    r = await s.call_tool(name, args)
    check(r.is_error, f"{name} should have returned isError, got {r.structured_content}")
    check(r.content and r.content[0].type == "text", f"{name}: error content[0] is not text")
    problem = json.loads(r.content[0].text)
    check(isinstance(problem, dict) and {"type", "title", "status", "detail", "code"} <= problem.keys(),
          f"{name}: error text is not a problem object: {problem}")
    return problem


async def main_flow(s, version):
    global step
    step = "1 initialize"
    init = await s.initialize()
    check(init.server_info.name == "cairn", f"server name {init.server_info.name!r} != 'cairn'")
    check(init.server_info.version == version, f"server version {init.server_info.version!r} != {version!r}")
    step = "2 tools/list"
    check_tools(await paged(pager(s.list_tools), "tools"))
    step = "4 whoami"
    me = await call(s, "whoami", {})
    check(isinstance(me.get("email"), str), f"whoami has no string email: {me}")
    step = "5 create_page"
    content = f"# {LANG} interop\n\nFirst line about zebras.\n"
    page = await call(s, "create_page", {"title": f"{LANG} interop", "content": content})
    check(PAGE_KEYS <= page.keys(), f"Page lacks keys {sorted(PAGE_KEYS - page.keys())}")
    check({"id", "name"} <= page["updated_by"].keys(), f"updated_by lacks id/name: {page['updated_by']}")
    check(page["title"] == f"{LANG} interop", f"title {page['title']!r}")
    slug, rev1, ws = page["slug"], page["revision"], page["workspace"]
    step = "6 get_page"
    got = await call(s, "get_page", {"slug": slug})
    check(got["slug"] == slug and got["revision"] == rev1, f"slug/revision differ: {got}")
    check(got["content"] == content, f"content differs: {got['content']!r}")
    step = "7 update_page (stale)"
    prob = await call_err(s, "update_page", {"slug": slug, "content": "stale text", "base_revision": ZERO_REV})
    check(prob["code"] == "stale_revision", f"code {prob['code']!r} != 'stale_revision'")
    check(prob.get("current_revision") == rev1, f"current_revision {prob.get('current_revision')!r} != {rev1!r}")
    step = "8 update_page"
    upd = await call(s, "update_page", {"slug": slug, "base_revision": rev1,
                                        "content": f"# {LANG} interop\n\nSecond version about zebras.\n"})
    check(upd["revision"] != rev1, "revision did not change after update")
    step = "9 append_to_page"
    app = await call(s, "append_to_page", {"slug": slug, "text": "Appended line about giraffes."})
    check("Appended line about giraffes." in app["content"], f"appended text missing: {app['content']!r}")
    check("Second version" in app["content"], f"updated text lost: {app['content']!r}")
    step = "10 search"
    res = await call(s, "search", {"query": "giraffes"})
    check({"query", "mode", "engine", "items", "total"} <= res.keys(), f"bad search result keys: {res.keys()}")
    check(any(i["slug"] == slug for i in res["items"]), f"{slug} not in search hits: {res['items']}")
    for i in res["items"]:
        check({"slug", "title", "snippet", "score"} <= i.keys(), f"bad search item: {i}")
    step = "11 get_page_history"
    hist = await call(s, "get_page_history", {"slug": slug})
    check(hist["total"] >= 3, f"history total {hist['total']} < 3")
    for i in hist["items"]:
        check({"sha", "message", "author", "created_at"} <= i.keys(), f"bad history item: {i}")
    # The create revision if history shas are page revisions; else oldest by created_at, with
    # equal timestamps (same second) falling back to git-log order (newest first).
    oldest = next((i for i in hist["items"] if i["sha"] == rev1), None) \
        or sorted(reversed(hist["items"]), key=lambda i: i["created_at"])[0]
    step = "12 diff_page_revisions"
    diff = await call(s, "diff_page_revisions", {"slug": slug, "sha": oldest["sha"]})
    check(isinstance(diff.get("unified"), str) and "zebras" in diff["unified"], f"bad unified diff: {diff}")
    check("to" in diff, f"diff lacks 'to': {diff.keys()}")
    step = "13 delete_page"
    d = await call(s, "delete_page", {"slug": slug})
    check(d.get("slug") == slug, f"delete_page result: {d}")
    step = "14 get_page (deleted)"
    prob = await call_err(s, "get_page", {"slug": slug})
    check(prob["code"] == "page_not_found" and prob["status"] == 404, f"unexpected problem: {prob}")
    step = "15 list_trash"
    trash = await call(s, "list_trash", {})
    check(any(i["slug"] == slug for i in trash["items"]), f"{slug} not in trash: {trash}")
    step = "16 restore_from_trash"
    back = await call(s, "restore_from_trash", {"slug": slug})
    check(back.get("slug") == slug, f"restored page has slug {back.get('slug')!r}")
    step = "17 resources"
    uri = f"cairn://pages/{quote(ws, safe='')}/{quote(slug, safe='')}"
    resources = await paged(pager(s.list_resources), "resources")
    check(any(str(r.uri) == uri for r in resources), f"{uri} not among {len(resources)} resources")
    rr = await s.read_resource(uri)
    check(rr.contents and "giraffes" in getattr(rr.contents[0], "text", ""), f"resource text lacks giraffes: {rr}")
    check(rr.contents[0].mime_type == "text/markdown", f"mimeType {rr.contents[0].mime_type!r}")
    templates = await paged(pager(s.list_resource_templates), "resource_templates")
    check(any(t.uri_template == "cairn://pages/{workspace}/{slug}" for t in templates),
          f"no cairn://pages/{{workspace}}/{{slug}} template: {[t.uri_template for t in templates]}")
    step = "18 delete + purge_from_trash"
    await call(s, "delete_page", {"slug": slug})
    await call(s, "purge_from_trash", {"slug": slug})
    trash = await call(s, "list_trash", {})
    check(all(i["slug"] != slug for i in trash["items"]), f"{slug} still in trash after purge")
    step = "19 unknown tool"
    try:
        r = await s.call_tool("no_such_tool", {})
    except MCPError as e:
        check(isinstance(e.code, int) and e.code < 0, f"MCPError without a JSON-RPC code: {e!r}")
    else:
        raise Fail(f"no_such_tool did not raise a JSON-RPC error; got result isError={r.is_error}")


async def modern_flow(url, headers, version):
    global step
    step = "21 mcp.Client 2026-07-28 (server/discover)"
    async with http_client(headers) as http:
        # mode="auto" sends server/discover first and only falls back to initialize
        # if the server rejects it, so asserting the negotiated version proves discover worked.
        async with Client(streamable_http_client(url, http_client=http), mode="auto") as c:
            check(c.protocol_version == "2026-07-28",
                  f"negotiated {c.protocol_version!r}: server/discover not accepted, fell back to initialize")
            check(c.session.discover_result is not None, "no DiscoverResult adopted")
            info = c.server_info  # optional on 2026-era connections
            check(info is None or (info.name == "cairn" and info.version == version), f"serverInfo {info}")
            step = "22 tools/list (2026-07-28)"
            check_tools(await paged(lambda cursor: c.list_tools(cursor=cursor), "tools"))


async def run(url, token, version):
    global step
    headers = {"Authorization": f"Bearer {token}"}
    async with http_client(headers) as http:
        async with streamable_http_client(url, http_client=http) as (read, write):
            async with ClientSession(read, write) as s:
                await main_flow(s, version)
                step = "20 close"
    await modern_flow(url, headers, version)


def leaves(e):
    if isinstance(e, BaseExceptionGroup):
        return [x for sub in e.exceptions for x in leaves(sub)]
    return [e]


def main():
    if len(sys.argv) != 4:
        print("usage: python client.py URL TOKEN VERSION", file=sys.stderr)
        return 2
    try:
        asyncio.run(run(*sys.argv[1:]))
    except BaseException as e:  # noqa: BLE001 - report any failure, including task-group wrapped ones
        for x in leaves(e):
            extra = f" (JSON-RPC code {x.code}, data {x.data!r})" if isinstance(x, MCPError) else ""
            print(f"FAIL [{LANG}] step {step}: {type(x).__name__}: {x}{extra}", file=sys.stderr)
        if http_errors:
            print(f"  last {http_errors[-1]}", file=sys.stderr)
        return 1
    print(f"ok: {LANG.lower()} interop passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
