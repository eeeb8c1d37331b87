//! The OpenID provider as Cairn's relying party sees it (`openidconnect`): its discovery
//! document, kept for a while; the authorization URL; the code exchanged for tokens; the
//! ID token verified; the person's claims. Its HTTP goes through Cairn's reqwest.

use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use openidconnect::core::{CoreAuthenticationFlow, CoreClient, CoreProviderMetadata, CoreUserInfoClaims};
use openidconnect::{
    AccessTokenHash, AsyncHttpClient, AuthorizationCode, ClientId, ClientSecret, CsrfToken, HttpClientError,
    HttpRequest, HttpResponse, IssuerUrl, Nonce, OAuth2TokenResponse, PkceCodeChallenge, PkceCodeVerifier, RedirectUrl,
    Scope, TokenResponse as _,
};

use crate::config::Config;
use crate::error::{Error, Result};

/// How long a discovery document is used before it is fetched again (keys rotate).
const DISCOVERY_TTL: Duration = Duration::from_secs(600);
/// How far the provider's clock may be ahead of or behind Cairn's.
const CLOCK_SKEW: Duration = Duration::from_secs(120);
/// A provider's answer that takes longer than this fails the sign-in.
const TIMEOUT: Duration = Duration::from_secs(10);

/// The configured provider (`OIDC_ISSUER`, `OIDC_CLIENT_ID`, `OIDC_CLIENT_SECRET`).
pub(crate) struct Provider {
    issuer: IssuerUrl,
    client_id: ClientId,
    secret: Option<ClientSecret>,
    http: Http,
    discovered: Mutex<Option<(Instant, CoreProviderMetadata)>>,
}

/// A sign-in begun: where to send the browser, and what its return must match.
pub(crate) struct Begun {
    pub url: String,
    pub state: String,
    pub nonce: String,
    pub pkce_verifier: String,
}

/// What the provider vouches for about the person signing in.
pub(crate) struct Person {
    pub subject: String,
    pub email: Option<String>,
    pub email_verified: bool,
    pub name: Option<String>,
}

impl Provider {
    /// The provider of `config`, when single sign-on is set up.
    pub(crate) fn from_config(config: &Config) -> anyhow::Result<Option<Provider>> {
        let (Some(issuer), Some(client_id)) = (&config.oidc_issuer, &config.oidc_client_id) else { return Ok(None) };
        // Discovery compares the issuer exactly, and a URL parsed by `url` gains a "/" on
        // a bare host that the provider's own issuer string usually lacks.
        let issuer = issuer.as_str().strip_suffix('/').unwrap_or(issuer.as_str());
        // No redirects: an endpoint answering elsewhere is not followed to another host.
        let http = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).timeout(TIMEOUT).build()?;
        Ok(Some(Provider {
            issuer: IssuerUrl::new(issuer.to_owned())?,
            client_id: ClientId::new(client_id.clone()),
            secret: config.oidc_client_secret.as_ref().map(|s| ClientSecret::new(s.expose().to_owned())),
            http: Http(http),
            discovered: Mutex::new(None),
        }))
    }

    /// The issuer's host, the button's name when none is set.
    pub(crate) fn host(&self) -> String {
        self.issuer.url().host_str().unwrap_or("the identity provider").to_owned()
    }

    pub(crate) fn issuer(&self) -> &str {
        self.issuer.as_str()
    }

    /// The discovery document: kept for [`DISCOVERY_TTL`], fetched again after it or
    /// when `fresh` (a token signed by a key not in the kept set).
    async fn metadata(&self, fresh: bool) -> Result<CoreProviderMetadata> {
        if !fresh
            && let Some((at, kept)) = self.discovered.lock().expect("not poisoned").as_ref()
            && at.elapsed() < DISCOVERY_TTL
        {
            return Ok(kept.clone());
        }
        let metadata = CoreProviderMetadata::discover_async(self.issuer.clone(), &self.http)
            .await
            .map_err(|e| Error::sso_unavailable(anyhow::anyhow!("discovery of {}: {e}", self.issuer.as_str())))?;
        *self.discovered.lock().expect("not poisoned") = Some((Instant::now(), metadata.clone()));
        Ok(metadata)
    }

    async fn client(&self, callback: &str, fresh: bool) -> Result<CoreClientWithEndpoints> {
        let redirect = RedirectUrl::new(callback.to_owned()).map_err(Error::internal)?;
        Ok(CoreClient::from_provider_metadata(self.metadata(fresh).await?, self.client_id.clone(), self.secret.clone())
            .set_redirect_uri(redirect))
    }

    /// The provider's authorization URL for a new sign-in (code flow, PKCE S256, a
    /// random `state` and `nonce`), asking for the person's email and name.
    pub(crate) async fn begin(&self, callback: &str) -> Result<Begun> {
        let client = self.client(callback, false).await?;
        let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
        let (url, state, nonce) = client
            .authorize_url(CoreAuthenticationFlow::AuthorizationCode, CsrfToken::new_random, Nonce::new_random)
            .add_scope(Scope::new("email".into()))
            .add_scope(Scope::new("profile".into()))
            .set_pkce_challenge(challenge)
            .url();
        Ok(Begun {
            url: url.into(),
            state: state.secret().clone(),
            nonce: nonce.secret().clone(),
            pkce_verifier: verifier.secret().clone(),
        })
    }

    /// Exchanges the code (with the PKCE verifier) and verifies the ID token: signature by
    /// the provider's published keys, issuer, audience, expiry (with [`CLOCK_SKEW`]),
    /// nonce, and the access token's hash when given. The email comes from the ID token,
    /// or from the userinfo endpoint when the token leaves it out.
    pub(crate) async fn finish(&self, callback: &str, code: &str, nonce: &str, verifier: &str) -> Result<Person> {
        let client = self.client(callback, false).await?;
        let http = &self.http;
        let exchange = client.exchange_code(AuthorizationCode::new(code.to_owned())).map_err(Error::internal)?;
        let tokens = exchange
            .set_pkce_verifier(PkceCodeVerifier::new(verifier.to_owned()))
            .request_async(http)
            .await
            .map_err(|e| match e {
            openidconnect::RequestTokenError::ServerResponse(answer) => Error::sso_refused(answer.error().as_ref()),
            other => Error::sso_unavailable(anyhow::anyhow!("token endpoint: {other:?}")),
        })?;
        let id_token = tokens.id_token().ok_or_else(|| Error::sso_token_invalid("no ID token"))?;
        let nonce = Nonce::new(nonce.to_owned());
        let verify = |client: &CoreClientWithEndpoints| {
            let checker = client.id_token_verifier().set_time_fn(|| chrono::Utc::now() - CLOCK_SKEW);
            let claims = id_token.claims(&checker, &nonce).cloned();
            claims.map_err(|e| e.to_string()).and_then(|claims| {
                if let Some(expected) = claims.access_token_hash() {
                    let signing = id_token.signing_alg().map_err(|e| e.to_string())?;
                    let key = id_token.signing_key(&checker).map_err(|e| e.to_string())?;
                    let actual =
                        AccessTokenHash::from_token(tokens.access_token(), signing, key).map_err(|e| e.to_string())?;
                    if actual != *expected {
                        return Err("the access token's hash differs".to_owned());
                    }
                }
                Ok(claims)
            })
        };
        // A key the kept discovery does not know may be a rotated one: look once more.
        let claims = match verify(&client) {
            Ok(claims) => claims,
            Err(_) => verify(&self.client(callback, true).await?).map_err(|why| Error::sso_token_invalid(&why))?,
        };
        // `openidconnect` leaves `iat` unchecked: a token issued in the future is refused.
        if claims.issue_time() > chrono::Utc::now() + CLOCK_SKEW {
            return Err(Error::sso_token_invalid("issued in the future"));
        }
        let mut person = Person {
            subject: claims.subject().to_string(),
            email: claims.email().map(|e| e.to_string()),
            email_verified: claims.email_verified() == Some(true),
            name: claims.name().and_then(|n| n.get(None)).map(|n| n.to_string()),
        };
        if person.email.is_none()
            && let Ok(request) = client.user_info(tokens.access_token().clone(), Some(claims.subject().clone()))
        {
            let info: CoreUserInfoClaims = request
                .request_async(http)
                .await
                .map_err(|e| Error::sso_unavailable(anyhow::anyhow!("userinfo endpoint: {e}")))?;
            person.email = info.email().map(|e| e.to_string());
            person.email_verified = info.email_verified() == Some(true);
            if person.name.is_none() {
                person.name = info.name().and_then(|n| n.get(None)).map(|n| n.to_string());
            }
        }
        Ok(person)
    }
}

/// Cairn's reqwest as `openidconnect`'s HTTP client.
struct Http(reqwest::Client);

type Answer<'c> =
    Pin<Box<dyn Future<Output = Result<HttpResponse, HttpClientError<reqwest::Error>>> + Send + Sync + 'c>>;

impl<'c> AsyncHttpClient<'c> for Http {
    type Error = HttpClientError<reqwest::Error>;
    type Future = Answer<'c>;

    fn call(&'c self, request: HttpRequest) -> Answer<'c> {
        Box::pin(async move {
            let response = self.0.execute(request.try_into().map_err(Box::new)?).await.map_err(Box::new)?;
            let mut answer = openidconnect::http::Response::builder().status(response.status());
            for (name, value) in response.headers() {
                answer = answer.header(name, value);
            }
            answer.body(response.bytes().await.map_err(Box::new)?.to_vec()).map_err(HttpClientError::Http)
        })
    }
}

/// A client whose endpoints came from discovery (the token and userinfo endpoints are
/// optional there, so `openidconnect` checks them when used).
type CoreClientWithEndpoints = CoreClient<
    openidconnect::EndpointSet,
    openidconnect::EndpointNotSet,
    openidconnect::EndpointNotSet,
    openidconnect::EndpointNotSet,
    openidconnect::EndpointMaybeSet,
    openidconnect::EndpointMaybeSet,
>;
