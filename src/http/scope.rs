//! What most routes begin with, read once: the signed-in caller, the workspace the query's
//! `ws=` names (else the caller's default) with their access to it proven, and the page the
//! route's `{slug}` names in it. A caller who may not use the workspace meets its 404 here,
//! before the request's body is read.

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use utoipa::IntoParams;

use crate::core::Ctx;
use crate::core::pages;
use crate::core::workspaces::{self, Access};
use crate::error::Error;
use crate::http::auth::AuthUser;
use crate::http::extract::{Path, Query};
use crate::ids::Slug;

/// The query of a route that takes nothing but the workspace.
#[derive(Deserialize, IntoParams, Default)]
#[into_params(parameter_in = Query)]
pub(crate) struct Ws {
    /// Workspace slug (default: the caller's default workspace).
    pub ws: Option<String>,
}

/// A route's query string, which may name a workspace with `ws=`.
pub(crate) trait NamesWorkspace {
    fn ws(&self) -> Option<&str>;
}

/// Queries whose `ws` field names the workspace (each route's module names its own).
macro_rules! names_workspace {
    ($($query:ty),* $(,)?) => {
        $(impl $crate::http::scope::NamesWorkspace for $query {
            fn ws(&self) -> Option<&str> {
                self.ws.as_deref()
            }
        })*
    };
}

pub(crate) use names_workspace;

names_workspace!(Ws);

/// The signed-in caller in the workspace their query names, and the rest of that query.
pub(crate) struct Member<Q = Ws> {
    pub auth: AuthUser,
    pub access: Access,
    pub query: Q,
}

impl<Q: DeserializeOwned + NamesWorkspace + Send> FromRequestParts<Ctx> for Member<Q> {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, ctx: &Ctx) -> Result<Self, Error> {
        let auth = AuthUser::from_request_parts(parts, ctx).await?;
        let Query(query) = Query::<Q>::from_request_parts(parts, ctx).await?;
        let access = workspaces::access_or_default(ctx, &auth.user, query.ws()).await?;
        Ok(Member { auth, access, query })
    }
}

/// [`Member`] on a route whose one path parameter is a page's slug: the slug as the core
/// takes it (a name that is no slug is no page, 404). The page itself is the core's to
/// find, in the same transaction as what it does with it.
pub(crate) struct OnPage<Q = Ws> {
    member: Member<Q>,
    pub slug: Slug,
}

impl<Q> std::ops::Deref for OnPage<Q> {
    type Target = Member<Q>;

    fn deref(&self) -> &Member<Q> {
        &self.member
    }
}

impl<Q: DeserializeOwned + NamesWorkspace + Send> FromRequestParts<Ctx> for OnPage<Q> {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, ctx: &Ctx) -> Result<Self, Error> {
        let member = Member::<Q>::from_request_parts(parts, ctx).await?;
        let Path(raw) = Path::<String>::from_request_parts(parts, ctx).await?;
        Ok(OnPage { member, slug: pages::named(&raw)? })
    }
}
