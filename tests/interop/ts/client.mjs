#!/usr/bin/env node
// Cairn MCP interop client: the official TypeScript SDK (@modelcontextprotocol/sdk 1.32.2)
// against /api/mcp.
//
// Proves that a stock MCP client can, over Streamable HTTP with a bearer token: initialize
// (server "cairn" at the expected version), list exactly the 27 tools with readOnlyHint +
// outputSchema (the SDK then validates every structuredContent against it), call tools whose
// JSON text equals their structuredContent, drive a page through create/get/stale-update/
// update/append/search/history/diff/trash/restore/purge, read the page as a resource, and get
// a JSON-RPC error (McpError) for an unknown tool.
//
// Usage: node client.mjs URL TOKEN VERSION     Exit code 0 = pass.
import { isDeepStrictEqual } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';

const LANG = 'TypeScript';
const ZERO_REV = '0'.repeat(40);
const TOOLS = new Set(`whoami list_workspaces list_pages list_recent_pages get_page create_page update_page
  append_to_page delete_page move_page rename_page list_children get_backlinks get_page_history
  get_page_revision diff_page_revisions restore_page_revision list_trash restore_from_trash
  purge_from_trash search suggest_links suggest_tags summarize_page get_insights get_graph list_tags`.split(/\s+/));
const PAGE_KEYS = 'slug title content parent tags links revision created_at updated_at updated_by workspace'.split(' ');

class Fail extends Error {}
let step = 'startup';
const check = (cond, msg) => { if (!cond) throw new Fail(msg); };
const show = (v) => JSON.stringify(v);
const hasKeys = (obj, keys) => obj !== null && typeof obj === 'object' && keys.every((k) => k in obj);

// Collect every item of a paginated list: fetch(params) is e.g. client.listTools.
async function paged(fetch, attr) {
  const items = [];
  let cursor;
  do {
    const res = await fetch(cursor ? { cursor } : undefined);
    items.push(...res[attr]);
    cursor = res.nextCursor;
  } while (cursor);
  return items;
}

async function call(client, name, args) {
  const r = await client.callTool({ name, arguments: args });
  const text = r.content?.[0]?.type === 'text' ? r.content[0].text : undefined;
  check(!r.isError, `${name} returned isError: ${text}`);
  check(text !== undefined, `${name}: content[0] is not a text block`);
  check(isDeepStrictEqual(JSON.parse(text), r.structuredContent),
    `${name}: content[0].text JSON != structuredContent\n${text}\n${show(r.structuredContent)}`);
  return r.structuredContent;
}

async function callErr(client, name, args) {
  const r = await client.callTool({ name, arguments: args });
  check(r.isError === true, `${name} should have returned isError, got ${show(r.structuredContent)}`);
  check(r.content?.[0]?.type === 'text', `${name}: error content[0] is not text`);
  const problem = JSON.parse(r.content[0].text);
  check(hasKeys(problem, ['type', 'title', 'status', 'detail', 'code']), `${name}: not a problem object: ${show(problem)}`);
  return problem;
}

async function run(url, token, version) {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  const client = new Client({ name: 'cairn-interop-ts', version: '0.0.0' });

  step = '1 initialize';
  await client.connect(transport);
  const info = client.getServerVersion();
  check(info?.name === 'cairn', `server name ${show(info?.name)} != "cairn"`);
  check(info?.version === version, `server version ${show(info?.version)} != ${show(version)}`);

  step = '2 tools/list';
  const tools = await paged((p) => client.listTools(p), 'tools');
  const names = new Set(tools.map((t) => t.name));
  check(tools.length === 27, `expected 27 tools, got ${tools.length}`);
  check(names.size === TOOLS.size && [...TOOLS].every((n) => names.has(n)),
    `tool set differs: missing ${show([...TOOLS].filter((n) => !names.has(n)))}, extra ${show([...names].filter((n) => !TOOLS.has(n)))}`);
  for (const t of tools) {
    check(typeof t.annotations?.readOnlyHint === 'boolean', `tool ${t.name} lacks a boolean annotations.readOnlyHint`);
    check(t.outputSchema && typeof t.outputSchema === 'object', `tool ${t.name} lacks an outputSchema`);
  }

  step = '4 whoami';
  const me = await call(client, 'whoami', {});
  check(typeof me.email === 'string', `whoami has no string email: ${show(me)}`);

  step = '5 create_page';
  const content = `# ${LANG} interop\n\nFirst line about zebras.\n`;
  const page = await call(client, 'create_page', { title: `${LANG} interop`, content });
  check(hasKeys(page, PAGE_KEYS), `Page lacks keys ${show(PAGE_KEYS.filter((k) => !(k in page)))}`);
  check(hasKeys(page.updated_by, ['id', 'name']), `updated_by lacks id/name: ${show(page.updated_by)}`);
  check(page.title === `${LANG} interop`, `title ${show(page.title)}`);
  const { slug, revision: rev1, workspace: ws } = page;

  step = '6 get_page';
  const got = await call(client, 'get_page', { slug });
  check(got.slug === slug && got.revision === rev1, `slug/revision differ: ${show(got)}`);
  check(got.content === content, `content differs: ${show(got.content)}`);

  step = '7 update_page (stale)';
  let prob = await callErr(client, 'update_page', { slug, content: 'stale text', base_revision: ZERO_REV });
  check(prob.code === 'stale_revision', `code ${show(prob.code)} != "stale_revision"`);
  check(prob.current_revision === rev1, `current_revision ${show(prob.current_revision)} != ${show(rev1)}`);

  step = '8 update_page';
  const upd = await call(client, 'update_page',
    { slug, base_revision: rev1, content: `# ${LANG} interop\n\nSecond version about zebras.\n` });
  check(upd.revision !== rev1, 'revision did not change after update');

  step = '9 append_to_page';
  const app = await call(client, 'append_to_page', { slug, text: 'Appended line about giraffes.' });
  check(app.content.includes('Appended line about giraffes.'), `appended text missing: ${show(app.content)}`);
  check(app.content.includes('Second version'), `updated text lost: ${show(app.content)}`);

  step = '10 search';
  const res = await call(client, 'search', { query: 'giraffes' });
  check(hasKeys(res, ['query', 'mode', 'engine', 'items', 'total']), `bad search result: ${show(res)}`);
  check(res.items.every((i) => hasKeys(i, ['slug', 'title', 'snippet', 'score'])), `bad search items: ${show(res.items)}`);
  check(res.items.some((i) => i.slug === slug), `${slug} not in search hits: ${show(res.items)}`);

  step = '11 get_page_history';
  const hist = await call(client, 'get_page_history', { slug });
  check(hist.total >= 3, `history total ${hist.total} < 3`);
  check(hist.items.every((i) => hasKeys(i, ['sha', 'message', 'author', 'created_at'])), `bad history items: ${show(hist.items)}`);
  // The create revision if history shas are page revisions; else oldest by created_at, with
  // equal timestamps (same second) falling back to git-log order (newest first).
  const oldest = hist.items.find((i) => i.sha === rev1)
    ?? hist.items.reduce((a, b) => (b.created_at <= a.created_at ? b : a));

  step = '12 diff_page_revisions';
  const diff = await call(client, 'diff_page_revisions', { slug, sha: oldest.sha });
  check(typeof diff.unified === 'string' && diff.unified.includes('zebras'), `bad unified diff: ${show(diff)}`);
  check('to' in diff, `diff lacks "to": ${show(Object.keys(diff))}`);

  step = '13 delete_page';
  const del = await call(client, 'delete_page', { slug });
  check(del.slug === slug, `delete_page result: ${show(del)}`);

  step = '14 get_page (deleted)';
  prob = await callErr(client, 'get_page', { slug });
  check(prob.code === 'page_not_found' && prob.status === 404, `unexpected problem: ${show(prob)}`);

  step = '15 list_trash';
  let trash = await call(client, 'list_trash', {});
  check(trash.items.some((i) => i.slug === slug), `${slug} not in trash: ${show(trash)}`);

  step = '16 restore_from_trash';
  const back = await call(client, 'restore_from_trash', { slug });
  check(back.slug === slug, `restored page has slug ${show(back.slug)}`);

  step = '17 resources';
  const uri = `cairn://pages/${encodeURIComponent(ws)}/${encodeURIComponent(slug)}`;
  const resources = await paged((p) => client.listResources(p), 'resources');
  check(resources.some((r) => r.uri === uri), `${uri} not among ${resources.length} resources`);
  const rr = await client.readResource({ uri });
  check(rr.contents?.[0]?.text?.includes('giraffes'), `resource text lacks giraffes: ${show(rr)}`);
  check(rr.contents[0].mimeType === 'text/markdown', `mimeType ${show(rr.contents[0].mimeType)}`);
  const templates = await paged((p) => client.listResourceTemplates(p), 'resourceTemplates');
  check(templates.some((t) => t.uriTemplate === 'cairn://pages/{workspace}/{slug}'),
    `no cairn://pages/{workspace}/{slug} template: ${show(templates.map((t) => t.uriTemplate))}`);

  step = '18 delete + purge_from_trash';
  await call(client, 'delete_page', { slug });
  await call(client, 'purge_from_trash', { slug });
  trash = await call(client, 'list_trash', {});
  check(trash.items.every((i) => i.slug !== slug), `${slug} still in trash after purge`);

  step = '19 unknown tool';
  let r;
  try {
    r = await client.callTool({ name: 'no_such_tool', arguments: {} });
  } catch (e) {
    check(e instanceof McpError && Number.isInteger(e.code) && e.code < 0, `expected McpError, got ${e}`);
  }
  check(r === undefined, `no_such_tool did not raise a JSON-RPC error; got result ${show(r)}`);

  step = '20 close';
  await transport.terminateSession();
  await client.close();
}

const [url, token, version] = process.argv.slice(2);
if (!version) {
  console.error('usage: node client.mjs URL TOKEN VERSION');
  process.exit(2);
}
try {
  await run(url, token, version);
  console.log(`ok: ${LANG.toLowerCase()} interop passed`);
  process.exit(0);
} catch (e) {
  const hint = e instanceof McpError && /structured content|output schema/i.test(e.message)
    ? ' (the SDK checks structuredContent, even on isError results, against the tool outputSchema)' : '';
  const detail = e instanceof Fail ? e.message
    : e instanceof McpError ? `McpError ${e.code}: ${e.message} data=${show(e.data)}` : e?.stack ?? e;
  console.error(`FAIL [${LANG}] step ${step}: ${detail}${hint}`);
  process.exit(1);
}
