#!/usr/bin/env node
// The official TypeScript SDK's OAuth client (@modelcontextprotocol/sdk 1.32.2, an
// OAuthClientProvider given to StreamableHTTPClientTransport) against Cairn, as an agent
// connects knowing only the MCP URL: the 401 leads it to the protected-resource and
// authorization-server metadata; it registers itself (RFC 7591) and sends the person to
// the authorization URL, where the person allows it — posted here as the consent screen
// posts it, with the person's session cookie; finishAuth exchanges the code (PKCE); it
// lists the tools and saves a page; its access token stops working and it refreshes; the
// person disconnects it and its next call fails.
//
// Usage: node oauth_client.mjs MCP_URL SESSION_COOKIE     Exit code 0 = pass.
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const [url, cookie] = process.argv.slice(2);
const base = url.replace(/\/api\/mcp$/, '');
const person = (path, init = {}) =>
  fetch(base + path, { ...init, redirect: 'manual', headers: { cookie: `cairn_session=${cookie}`, origin: base, ...init.headers } });

let consents = 0;
let code = null;

// What the SDK asks of the application: where it keeps things, and how the person is sent
// to the authorization URL (here: approved at once, as the person would click Allow).
const provider = {
  stored: { client: undefined, tokens: undefined, verifier: undefined },
  get redirectUrl() { return 'http://127.0.0.1:33419/callback'; },
  get clientMetadata() {
    return { client_name: 'TypeScript SDK agent', redirect_uris: [this.redirectUrl], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none' };
  },
  state() { return `ts-${Math.random().toString(36).slice(2)}`; },
  clientInformation() { return this.stored.client; },
  saveClientInformation(info) { this.stored.client = info; },
  tokens() { return this.stored.tokens; },
  saveTokens(tokens) { this.stored.tokens = tokens; },
  saveCodeVerifier(v) { this.stored.verifier = v; },
  codeVerifier() { return this.stored.verifier; },
  async redirectToAuthorization(authorizationUrl) {
    if (consents > 0) throw new Error('asked to consent again: the person disconnected this app');
    const res = await fetch(authorizationUrl, { redirect: 'manual' });
    assert.equal(res.status, 303);
    const screen = new URL(res.headers.get('location'), base);
    assert.equal(screen.pathname, '/app/-/authorize');
    const request = Object.fromEntries(screen.searchParams);
    const asked = await (await person(`/api/oauth/consent?${screen.searchParams}`)).json();
    assert.equal(asked.client_name, 'TypeScript SDK agent');
    const given = await person('/api/oauth/consent', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...request, allow: true }) });
    assert.equal(given.status, 200, await given.clone().text());
    const back = new URL((await given.json()).redirect);
    assert.equal(back.searchParams.get('state'), request.state);
    code = back.searchParams.get('code');
    consents += 1;
  },
};

// `initialize` needs no token; the first call that does gets the 401 that starts the
// flow, which ends in UnauthorizedError once the person was sent to the authorization URL.
const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
const client = new Client({ name: 'cairn-oauth-interop', version: '0' });
await client.connect(transport);
async function authorized(call) {
  try {
    return await call();
  } catch (e) {
    if (!(e instanceof UnauthorizedError) || !code) throw e;
    // The application's redirect endpoint received the code: finish, and call again.
    await transport.finishAuth(code);
    code = null;
    return await call();
  }
}

const { tools } = await authorized(() => client.listTools());
assert.equal(consents, 1);
assert.equal(tools.length, 27);
const made = await client.callTool({ name: 'create_page', arguments: { title: 'Made by the TypeScript agent', content: 'hi' } });
assert.ok(!made.isError, JSON.stringify(made));

// The access token stops working: the SDK refreshes with the refresh token and goes on.
const first = provider.stored.tokens.access_token;
provider.stored.tokens = { ...provider.stored.tokens, access_token: 'oat_stale' };
assert.equal((await client.listTools()).tools.length, 27);
assert.notEqual(provider.stored.tokens.access_token, first);
assert.equal(consents, 1, 'a refresh asks the person nothing');

// The person disconnects the app: its next call fails.
const grants = (await (await person('/api/oauth/grants')).json()).items.filter((g) => g.client_name === 'TypeScript SDK agent');
assert.equal(grants.length, 1);
assert.equal((await person(`/api/oauth/grants/${grants[0].id}`, { method: 'DELETE' })).status, 204);
await assert.rejects(client.listTools(), 'a call after revocation fails');
const page = await person('/api/pages/made-by-the-typescript-agent');
assert.equal(page.status, 200);
console.log('oauth interop passed');
process.exit(0);
