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

use crate::core::live::watch::Event;
use crate::core::live::{self, Connection, Refusal};
use crate::core::pages::rows::Row;
use crate::core::users::User;
use crate::core::workspaces::Access;
use crate::core::{Ctx, pages, workspaces};
use crate::error::{Error, Result};
use crate::http::Problem;
use crate::http::connections::Slot;
use crate::http::csrf;
use crate::http::scope::OnPage;

/// How often an open connection checks that its user is still a member.
const MEMBERSHIP_EVERY: Duration = Duration::from_secs(2);
/// A connection's read buffer. tungstenite's default (128 KiB, zero-filled on the first
/// read) would be most of what an open session costs; Yjs messages are small, and a
/// larger one is read in several passes.
const READ_BUFFER: usize = 8 * 1024;

/// The close code of a session whose page was deleted (trashed or purged) meanwhile: the
/// application's own range, 4000–4999; 4404 reads as the HTTP status it stands for.
const PAGE_GONE: u16 = 4404;

pub(crate) fn router() -> OpenApiRouter<Ctx> {
    OpenApiRouter::new().routes(routes!(live_page)).routes(routes!(watch_page))
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
    let (page, upgrade) = checked(&ctx, &p, &headers, upgrade).await?;
    let connection = live::join(&ctx, &p.access, &p.auth.user, page).await?;
    // The connection's place among MAX_CONNECTIONS stays taken while the WebSocket lives.
    let slot = slot.and_then(|Extension(slot)| slot.take());
    Ok(upgrade.max_message_size(live::MAX_MESSAGE).on_upgrade(move |socket| async move {
        serve(ctx, connection, socket).await;
        drop(slot);
    }))
}

/// Follows the page without editing it, as its page view does: a WebSocket whose text
/// frames are JSON events — `{"type":"presence","people":[{"id","name","typing"}]}`
/// (everyone in its co-editing session, first when connected and whenever it changes),
/// `{"type":"saved","revision","slug"}` (a new revision, from any door, and the page's
/// address then) and
/// `{"type":"deleted"}` (the connection then closes with 4404). It sends nothing; the
/// same credentials, checks and limits as the session's. An extension.
#[utoipa::path(get, path = "/api/pages/{slug}/watch", tags = ["pages", "extension"],
    params(("slug" = String, Path), crate::http::scope::Ws),
    responses((status = 101, description = "Switched to the WebSocket protocol"),
        (status = 400, body = Problem, description = "Not a WebSocket upgrade"),
        (status = 403, body = Problem, description = "An upgrade from another site's page"),
        (status = 404, body = Problem), (status = 503, body = Problem)))]
async fn watch_page(
    State(ctx): State<Ctx>,
    p: OnPage,
    headers: HeaderMap,
    slot: Option<Extension<Slot>>,
    upgrade: std::result::Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Result<Response> {
    let (page, upgrade) = checked(&ctx, &p, &headers, upgrade).await?;
    let ws_id = p.access.workspace_id();
    // Subscribed before the people are read: a change in between is told, not missed.
    let events = ctx.live.watchers.subscribe(ws_id, &page.uid);
    let people = live::present(&ctx, ws_id, &page.uid).await;
    let slot = slot.and_then(|Extension(slot)| slot.take());
    let (user, access) = (p.auth.user.clone(), p.access.clone());
    Ok(upgrade.max_message_size(1024).on_upgrade(move |socket| async move {
        watch(ctx, (user, access), events, people, socket).await;
        drop(slot);
    }))
}

/// What both routes check before the upgrade: the page first (404, or 308 for an old
/// slug, as on every page route), then the request's site (403), then that it is an
/// upgrade at all (400). Answers the page and the upgrade, its read buffer set.
async fn checked(
    ctx: &Ctx,
    p: &OnPage,
    headers: &HeaderMap,
    upgrade: std::result::Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Result<(Row, WebSocketUpgrade)> {
    let page = pages::row(ctx, &p.access, &p.slug).await?;
    csrf::same_origin(headers)?;
    let upgrade = upgrade.map_err(|e| Error::not_a_websocket(&e.body_text()))?;
    Ok((page, upgrade.read_buffer_size(READ_BUFFER)))
}

async fn watch(
    ctx: Ctx,
    (user, access): (User, Access),
    mut events: tokio::sync::broadcast::Receiver<std::sync::Arc<Event>>,
    people: Vec<live::watch::Person>,
    mut socket: WebSocket,
) {
    let first = Event::Presence { people };
    if socket.send(Message::Text(json(&first).into())).await.is_err() {
        return;
    }
    let mut membership = tokio::time::interval(MEMBERSHIP_EVERY);
    let close = loop {
        tokio::select! {
            frame = socket.recv() => match frame {
                Some(Ok(Message::Ping(_) | Message::Pong(_))) => {}
                Some(Ok(Message::Text(_) | Message::Binary(_))) => break Some((close_code::POLICY, "a watcher sends nothing".to_owned())),
                Some(Ok(Message::Close(_))) | Some(Err(_)) | None => return,
            },
            event = events.recv() => match event {
                Ok(event) => {
                    if socket.send(Message::Text(json(&event).into())).await.is_err() {
                        return;
                    }
                    if *event == Event::Deleted {
                        break Some((PAGE_GONE, "the page was deleted".to_owned()));
                    }
                }
                // Missed some: the next one is still told.
                Err(RecvError::Lagged(_)) => {}
                Err(RecvError::Closed) => return,
            },
            _ = membership.tick() => {
                if workspaces::access(&ctx, &user, access.slug()).await.is_err() {
                    break Some((close_code::POLICY, "no longer a member of the workspace".to_owned()));
                }
            }
        }
    };
    close_with(socket, close).await;
}

/// Closes the connection with the code and reason the server gave, if it gave one (else
/// it closes when dropped).
async fn close_with(mut socket: WebSocket, close: Option<(u16, String)>) {
    if let Some((code, reason)) = close {
        let _ = socket.send(Message::Close(Some(CloseFrame { code, reason: reason.into() }))).await;
    }
}

fn json(event: &Event) -> String {
    serde_json::to_string(event).unwrap_or_default()
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
                Ok(out) if out.gone => break Some((PAGE_GONE, "the page was deleted".to_owned())),
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
    close_with(socket, close).await;
}

fn close_for(refusal: &Refusal) -> (u16, String) {
    match refusal {
        Refusal::Malformed(why) => (close_code::INVALID, format!("malformed message: {why}")),
        Refusal::Limit(why) => (close_code::SIZE, why.clone()),
        Refusal::Unavailable => (close_code::AGAIN, "the update could not be stored; reconnect".to_owned()),
    }
}
