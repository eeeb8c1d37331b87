//! Invitations to a workspace. Cairn sends no mail, so an owner's invitation is answered
//! with a link to pass on: one use, expiring after [`LIFETIME_SECS`], kept by its SHA-256
//! only. Whoever opens the link may join with the role offered — by registering (even
//! where registration is closed), by signing in, or through single sign-on. The account
//! that already had the invited email when the invitation was made sees it in the app too,
//! without the link; an account registered later with that email does not (Cairn does not
//! verify emails, so only the link proves it was meant for them).
//!
//! Looking a link up is counted per client address ([`limiter::Guarded::Invitation`]):
//! past `LOGIN_MAX_FAILURES_PER_ADDRESS` unknown links inside the window, 429.

use serde::Serialize;
use sqlx::{Any, Transaction};
use utoipa::ToSchema;

use super::Ctx;
use super::accounts::limiter::{self, Guarded};
use super::accounts::{self, Checked, NewAccount};
use super::paging::Paging;
use super::users::{self, User};
use super::workspaces::{self, Owner, Role};
use crate::auth::secrets;
use crate::error::{Error, Result};
use crate::ids::Email;
use crate::time::Timestamp;

/// How long an invitation link can be used.
pub(crate) const LIFETIME_SECS: i64 = 7 * 24 * 3600;
/// An expired invitation is still listed (as expired) this long, then forgotten.
const KEPT_EXPIRED_SECS: i64 = 30 * 24 * 3600;

/// An invitation as its workspace's owners see it (never its link, shown once).
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct Invitation {
    pub id: i64,
    pub email: String,
    pub role: Role,
    /// The name of the owner who invited, if that account still exists.
    pub invited_by: Option<String>,
    #[schema(value_type = String)]
    pub created_at: Timestamp,
    #[schema(value_type = String)]
    pub expires_at: Timestamp,
    /// Past its expiry: the link no longer works.
    pub expired: bool,
}

/// What an invitation offers, as the person invited sees it.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct InvitationOffer {
    /// The invitation's id (what `…/invitations/mine/{id}` takes; 0 when looked up by link).
    pub id: i64,
    pub workspace: String,
    pub workspace_name: String,
    pub role: Role,
    /// The email the invitation was made for.
    pub email: String,
    pub invited_by: Option<String>,
    #[schema(value_type = String)]
    pub expires_at: Timestamp,
}

type Row = (i64, String, String, Option<String>, Timestamp, i64);

fn invitation(now: i64, (id, email, role, invited_by, created_at, expires_at): Row) -> Invitation {
    Invitation {
        id,
        email,
        role: Role::parse(&role),
        invited_by,
        created_at,
        expires_at: Timestamp::from_unix(expires_at),
        expired: expires_at <= now,
    }
}

/// Invites `email` to the owner's workspace as `role` (a member unless said): answers the
/// invitation and the link's secret, shown this once. An earlier invitation of the same
/// email to this workspace is replaced (its link stops working); an email whose account
/// is a member already is 409 `already_member`.
pub(crate) async fn create(
    ctx: &Ctx,
    owner: &Owner,
    by: &User,
    email: &str,
    role: Option<Role>,
) -> Result<(Invitation, String)> {
    let email = Email::parse(email)?;
    let role = role.unwrap_or_default();
    let token = secrets::random_base62(43);
    let now = ctx.clock.unix();
    let mut tx = ctx.db.write().await?;
    let invitee = workspaces::account_and_membership(&mut tx, owner.workspace_id(), &email).await?;
    if invitee.is_some_and(|(_, member)| member) {
        return Err(Error::already_member(email.as_str()));
    }
    sqlx::query("DELETE FROM invitations WHERE workspace_id = $1 AND email = $2")
        .bind(owner.workspace_id())
        .bind(email.as_str())
        .execute(&mut *tx)
        .await?;
    let created_at = ctx.clock.rfc3339();
    let expires_at = now + LIFETIME_SECS;
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO invitations (workspace_id, email, role, token_hash, invited_by, invitee_id, created_at, expires_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id",
    )
    .bind(owner.workspace_id())
    .bind(email.as_str())
    .bind(role.as_str())
    .bind(secrets::sha256_hex(&token))
    .bind(by.id)
    .bind(invitee.map(|(id, _)| id))
    .bind(&created_at)
    .bind(expires_at)
    .fetch_one(&mut *tx)
    .await?;
    tx.commit().await?;
    tracing::info!(workspace = owner.slug(), invitation = id, "invitation made");
    let row = (id, email.as_str().to_owned(), role.as_str().to_owned(), Some(by.name.clone()), created_at, expires_at);
    Ok((invitation(now, row), token))
}

/// The workspace's invitations not yet used or revoked, newest first; expired ones are
/// listed (as such) for a while.
pub(crate) async fn list(ctx: &Ctx, owner: &Owner, paging: Paging) -> Result<(Vec<Invitation>, i64)> {
    let mut tx = ctx.db.snapshot().await?;
    let (rows, total): (Vec<Row>, i64) = paging
        .window(
            &mut tx,
            "SELECT i.id, i.email, i.role, u.name, i.created_at, i.expires_at FROM invitations i \
             LEFT JOIN users u ON u.id = i.invited_by WHERE i.workspace_id = $1 ORDER BY i.id DESC LIMIT $2 OFFSET $3",
            "SELECT COUNT(*) FROM invitations WHERE workspace_id = $1",
            owner.workspace_id(),
        )
        .await?;
    tx.commit().await?;
    let now = ctx.clock.unix();
    Ok((rows.into_iter().map(|row| invitation(now, row)).collect(), total))
}

/// Revokes an invitation of the owner's workspace: its link stops working at once.
pub(crate) async fn revoke(ctx: &Ctx, owner: &Owner, id: i64) -> Result<()> {
    let done = sqlx::query("DELETE FROM invitations WHERE id = $1 AND workspace_id = $2")
        .bind(id)
        .bind(owner.workspace_id())
        .execute(&ctx.db.pool)
        .await?;
    if done.rows_affected() == 0 {
        return Err(Error::invitation_not_found());
    }
    tracing::info!(workspace = owner.slug(), invitation = id, "invitation revoked");
    Ok(())
}

/// The offers of the invitations `$where` picks.
macro_rules! offers {
    ($where:literal) => {
        concat!(
            "SELECT i.id, w.slug, w.name, i.role, i.email, u.name, i.expires_at FROM invitations i \
             JOIN workspaces w ON w.id = i.workspace_id LEFT JOIN users u ON u.id = i.invited_by WHERE ",
            $where
        )
    };
}

type OfferRow = (i64, String, String, String, String, Option<String>, i64);

fn offer_of((id, workspace, workspace_name, role, email, invited_by, expires_at): OfferRow) -> InvitationOffer {
    InvitationOffer {
        id,
        workspace,
        workspace_name,
        role: Role::parse(&role),
        email,
        invited_by,
        expires_at: Timestamp::from_unix(expires_at),
    }
}

/// What the link `token` offers, for whoever holds it (no credential needed); 404 for a
/// link unknown, used, revoked or expired alike. Counted against guessing.
pub(crate) async fn by_link(ctx: &Ctx, token: &str, address: &str) -> Result<InvitationOffer> {
    let attempt = limiter::attempt_at(ctx, Guarded::Invitation, address).await?;
    let row: Option<OfferRow> = sqlx::query_as(offers!("i.token_hash = $1 AND i.expires_at > $2"))
        .bind(secrets::sha256_hex(token))
        .bind(ctx.clock.unix())
        .fetch_optional(&ctx.db.pool)
        .await?;
    let row = row.ok_or_else(Error::invitation_not_found)?;
    limiter::succeeded(ctx, attempt).await?;
    Ok(InvitationOffer { id: 0, ..offer_of(row) })
}

/// The invitations made to `user`'s account while it had their email, not yet expired.
pub(crate) async fn mine(ctx: &Ctx, user: &User) -> Result<Vec<InvitationOffer>> {
    let sql = offers!("i.invitee_id = $1 AND i.expires_at > $2 ORDER BY i.id");
    let rows: Vec<OfferRow> = sqlx::query_as(sql).bind(user.id).bind(ctx.clock.unix()).fetch_all(&ctx.db.pool).await?;
    Ok(rows.into_iter().map(offer_of).collect())
}

/// Which invitation is being taken: by its link, or (one made to the account) by its id.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Held<'a> {
    Link(&'a str),
    Mine(i64),
}

/// Takes the invitation for `user_id` inside `tx`: deletes it — so a link is used once,
/// even by two at the same moment — and joins its workspace with the role offered (an
/// account that is a member already keeps its role). Answers the workspace's slug; 404
/// when there is no such usable invitation.
pub(crate) async fn take_in_tx(
    ctx: &Ctx,
    tx: &mut Transaction<'_, Any>,
    held: Held<'_>,
    user_id: i64,
) -> Result<String> {
    let now = ctx.clock.unix();
    let taken: Option<(i64, String)> = match held {
        Held::Link(token) => {
            sqlx::query_as(
                "DELETE FROM invitations WHERE token_hash = $1 AND expires_at > $2 RETURNING workspace_id, role",
            )
            .bind(secrets::sha256_hex(token))
            .bind(now)
            .fetch_optional(&mut **tx)
            .await?
        }
        Held::Mine(id) => {
            sqlx::query_as(
                "DELETE FROM invitations WHERE id = $1 AND invitee_id = $2 AND expires_at > $3 \
                 RETURNING workspace_id, role",
            )
            .bind(id)
            .bind(user_id)
            .bind(now)
            .fetch_optional(&mut **tx)
            .await?
        }
    };
    let (workspace_id, role) = taken.ok_or_else(Error::invitation_not_found)?;
    let slug = workspaces::join_in_tx(ctx, tx, workspace_id, user_id, Role::parse(&role)).await?;
    tracing::info!(user_id, workspace = %slug, "invitation taken");
    Ok(slug)
}

/// Takes an invitation for a signed-in account (by link: counted against guessing).
/// Answers the workspace's slug.
pub(crate) async fn accept(ctx: &Ctx, user: &User, held: Held<'_>, address: &str) -> Result<String> {
    let attempt = match held {
        Held::Link(_) => Some(limiter::attempt_at(ctx, Guarded::Invitation, address).await?),
        Held::Mine(_) => None,
    };
    let mut tx = ctx.db.write().await?;
    let slug = take_in_tx(ctx, &mut tx, held, user.id).await?;
    tx.commit().await?;
    super::credentials::changed(ctx).await;
    if let Some(attempt) = attempt {
        limiter::succeeded(ctx, attempt).await?;
    }
    Ok(slug)
}

/// Creates an account through the link `token` and joins its workspace, in one
/// transaction: a link that is not usable makes no account. Open where registration is
/// closed (the invitation is the owner's leave), not with `OIDC_ONLY=1` (the identity
/// provider makes the accounts then).
pub(crate) async fn register(ctx: &Ctx, token: &str, new: NewAccount<'_>, address: &str) -> Result<User> {
    if ctx.config.oidc_only.on() {
        return Err(Error::password_sign_in_off());
    }
    let attempt = limiter::attempt_at(ctx, Guarded::Invitation, address).await?;
    let Checked { email, hash, name } = new.check(ctx).await?;
    let mut tx = ctx.db.write().await?;
    let user_id = accounts::create_in_tx(ctx, &mut tx, &email, &hash, &name, new.language).await?;
    take_in_tx(ctx, &mut tx, Held::Link(token), user_id).await?;
    tx.commit().await?;
    super::credentials::changed(ctx).await;
    limiter::succeeded(ctx, attempt).await?;
    users::get(ctx, user_id).await
}

/// Declines an invitation made to the account: it is gone for the inviter too.
pub(crate) async fn decline(ctx: &Ctx, user: &User, id: i64) -> Result<()> {
    let done = sqlx::query("DELETE FROM invitations WHERE id = $1 AND invitee_id = $2")
        .bind(id)
        .bind(user.id)
        .execute(&ctx.db.pool)
        .await?;
    if done.rows_affected() == 0 {
        return Err(Error::invitation_not_found());
    }
    Ok(())
}

/// Forgets invitations expired for a while; answers how many went. Run by the
/// maintenance worker.
pub(crate) async fn prune(ctx: &Ctx) -> Result<u64> {
    let done = sqlx::query("DELETE FROM invitations WHERE expires_at <= $1")
        .bind(ctx.clock.unix() - KEPT_EXPIRED_SECS)
        .execute(&ctx.db.pool)
        .await?;
    Ok(done.rows_affected())
}
