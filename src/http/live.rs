//! `GET /api/pages/{slug}/live`: a page's co-editing session over a WebSocket (the Yjs
//! sync and awareness protocols, binary frames; `core::live` holds the session). The
//! caller is signed in and a member as on every page route (404 otherwise), and a
//! browser's upgrade must come from this server's own pages.

use std::time::Duration;

use axum::Extension;
use axum::extract::State;
use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade, close_code};
use axum::http::HeaderMap;
use axum::response::Response;
use tokio::sync::broadcast::error::RecvError;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::core::live::{self, Connection, Refusal};
use crate::core::{Ctx, pages, workspaces};
use crate::error::{Error, Result};
use crate::http::Problem;
use crate::http::connections::Slot;
use crate::http::csrf;
use crate::http::scope::OnPage;

/// How often an open connection checks that its user is still a member.
const MEMBERSHIP_EVERY: Duration = Duration::from_secs(2);

pub(crate) fn router() -> OpenApiRouter<Ctx> {
    OpenApiRouter::new().routes(routes!(live_page))
}

/// Joins the page's co-editing session: upgrades to a WebSocket speaking the Yjs sync and
/// awareness protocols over the page's markdown (the root `Y.Text` named `markdown`). An
/// update is stored before the connection's next message is read; a `SyncStep2` answering
/// the client's `SyncStep1` says that every update it sent before is stored. The text
/// becomes a revision when editing pauses, at least every minute, and when the last
/// person leaves. An extension.
#[utoipa::path(get, path = "/api/pages/{slug}/live", tags = ["pages", "extension"],
    params(("slug" = String, Path), crate::http::scope::Ws),
    responses((status = 101, description = "Switched to the WebSocket protocol"),
        (status = 400, body = Problem, description = "Not a WebSocket upgrade"),
        (status = 403, body = Problem, description = "An upgrade from another site's page"),
        (status = 404, body = Problem), (status = 503, body = Problem)))]
async fn live_page(
    State(ctx): State<Ctx>,
    p: OnPage,
    headers: HeaderMap,
    slot: Option<Extension<Slot>>,
    upgrade: std::result::Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Result<Response> {
    // The page first: 404 (or 308 for an old slug) as on every page route.
    let page = pages::row(&ctx, &p.access, &p.slug).await?;
    csrf::same_origin(&headers)?;
    let upgrade = upgrade.map_err(|e| Error::not_a_websocket(&e.body_text()))?;
    let connection = live::join(&ctx, &p.access, &p.auth.user, page).await?;
    // The connection's place among MAX_CONNECTIONS stays taken while the WebSocket lives.
    let slot = slot.and_then(|Extension(slot)| slot.take());
    Ok(upgrade.max_message_size(live::MAX_MESSAGE).on_upgrade(move |socket| async move {
        serve(ctx, connection, socket).await;
        drop(slot);
    }))
}

async fn serve(ctx: Ctx, mut connection: Connection, mut socket: WebSocket) {
    if socket.send(Message::Binary(connection.start().into())).await.is_err() {
        return;
    }
    let mut others = connection.subscribe();
    let mut membership = tokio::time::interval(MEMBERSHIP_EVERY);
    let close = loop {
        tokio::select! {
            frame = socket.recv() => match frame {
                Some(Ok(Message::Binary(bytes))) => match connection.receive(&bytes).await {
                    Ok(replies) => {
                        for reply in replies {
                            if socket.send(Message::Binary(reply.into())).await.is_err() {
                                return;
                            }
                        }
                    }
                    Err(refusal) => break Some(close_for(&refusal)),
                },
                Some(Ok(Message::Text(_))) => break Some((close_code::UNSUPPORTED, "binary Yjs messages only".to_owned())),
                Some(Ok(Message::Ping(_) | Message::Pong(_))) => {}
                Some(Ok(Message::Close(_))) | Some(Err(_)) | None => return,
            },
            out = others.recv() => match out {
                Ok(out) if out.from(connection.id) => {}
                Ok(out) => {
                    if socket.send(Message::Binary(out.bytes.as_ref().clone().into())).await.is_err() {
                        return;
                    }
                }
                // Too far behind: it syncs again when it reconnects.
                Err(RecvError::Lagged(_)) => break Some((close_code::AGAIN, "too far behind; reconnect".to_owned())),
                Err(RecvError::Closed) => return,
            },
            _ = membership.tick() => {
                let (user, access) = connection.who();
                if workspaces::access(&ctx, user, access.slug()).await.is_err() {
                    break Some((close_code::POLICY, "no longer a member of the workspace".to_owned()));
                }
            }
        }
    };
    if let Some((code, reason)) = close {
        let _ = socket.send(Message::Close(Some(CloseFrame { code, reason: reason.into() }))).await;
    }
}

fn close_for(refusal: &Refusal) -> (u16, String) {
    match refusal {
        Refusal::Malformed(why) => (close_code::INVALID, format!("malformed message: {why}")),
        Refusal::Limit(why) => (close_code::SIZE, why.clone()),
        Refusal::Unavailable => (close_code::AGAIN, "the update could not be stored; reconnect".to_owned()),
    }
}
