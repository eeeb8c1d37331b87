//! Image uploads (docs/uploads.md): `POST /api/uploads` streams a multipart `file` into the
//! core; `GET /uploads/{name}` serves it back to members of its workspace only.

use axum::body::Body;
use axum::extract::multipart::{Multipart, MultipartRejection};
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use utoipa::ToSchema;
use utoipa_axum::router::{OpenApiRouter, UtoipaMethodRouterExt};
use utoipa_axum::routes;

use crate::core::Ctx;
use crate::core::uploads::{self, Incoming, Upload};
use crate::error::{Error, Result};
use crate::http::Problem;
use crate::http::auth::AuthUser;
use crate::http::extract::Path;
use crate::http::scope::{Member, Ws};

/// Room for the multipart framing around the file (boundaries, part headers, small fields).
const FRAMING_BYTES: u64 = 64 * 1024;

/// What served files may do in a browser: nothing but be an image. A file opened
/// directly runs no script and loads nothing, whatever its bytes hold.
const SERVED_CSP: &str = "default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; sandbox";

pub(crate) fn router() -> OpenApiRouter<Ctx> {
    // The JSON routes' body limit does not fit uploads. This handler counts every byte
    // itself as it streams: the file's against UPLOAD_MAX_BYTES, the rest against
    // FRAMING_BYTES.
    OpenApiRouter::new().routes(routes!(upload).layer(DefaultBodyLimit::disable())).routes(routes!(serve_upload))
}

/// The multipart form of an upload.
#[derive(ToSchema)]
#[allow(dead_code)]
pub(crate) struct UploadForm {
    /// The image: PNG, JPEG, GIF, WebP, AVIF or SVG (judged from its bytes; an SVG is kept sanitized).
    #[schema(value_type = String, format = Binary)]
    file: Vec<u8>,
}

/// An image's bytes, as uploaded.
#[derive(ToSchema)]
#[schema(value_type = String, format = Binary)]
#[allow(dead_code)]
pub(crate) struct ImageBytes(Vec<u8>);

/// Uploads an image into the workspace.
#[utoipa::path(post, path = "/api/uploads", tag = "uploads", params(Ws),
    request_body(content = UploadForm, content_type = "multipart/form-data"),
    responses((status = 201, body = Upload), (status = 404, body = Problem),
        (status = 413, body = Problem, description = "Over UPLOAD_MAX_BYTES"),
        (status = 415, body = Problem, description = "Not a PNG, JPEG, GIF, WebP, AVIF or SVG image"),
        (status = 422, body = Problem, description = "Not multipart, or no `file` field"), (status = 503, body = Problem)))]
async fn upload(
    State(ctx): State<Ctx>,
    Member { access, .. }: Member,
    headers: HeaderMap,
    form: std::result::Result<Multipart, MultipartRejection>,
) -> Result<(StatusCode, axum::Json<Upload>)> {
    let max = ctx.config.upload_max_bytes;
    // A declared length already over the limit is refused before a byte is read.
    let declared = headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    if declared.is_some_and(|n| n > max.saturating_add(FRAMING_BYTES)) {
        return Err(Error::upload_too_large(max));
    }
    let mut form =
        form.map_err(|e| Error::unprocessable(format!("send multipart/form-data with a `file` field: {e}")))?;
    let too_large_or = |e: axum::extract::multipart::MultipartError| {
        if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
            Error::upload_too_large(max)
        } else {
            Error::unprocessable(format!("unreadable multipart body: {e}"))
        }
    };
    let mut other_bytes = 0u64;
    while let Some(mut field) = form.next_field().await.map_err(too_large_or)? {
        if field.name() != Some("file") {
            // Read through (not buffered), counted: other fields are small or refused.
            while let Some(chunk) = field.chunk().await.map_err(too_large_or)? {
                other_bytes += chunk.len() as u64;
                if other_bytes > FRAMING_BYTES {
                    return Err(Error::upload_too_large(max));
                }
            }
            continue;
        }
        let mut incoming = Incoming::start(&ctx).await?;
        while let Some(chunk) = field.chunk().await.map_err(too_large_or)? {
            incoming.write(&chunk).await?;
        }
        let kept = incoming.finish(&ctx, &access).await?;
        return Ok((StatusCode::CREATED, axum::Json(kept)));
    }
    Err(Error::unprocessable("the multipart body has no `file` field"))
}

/// Serves an upload to a member of its workspace.
#[utoipa::path(get, path = "/uploads/{name}", tag = "uploads", params(("name" = String, Path, description = "`<sha256>.<ext>`")),
    responses((status = 200, description = "The image, with the type sniffed at upload",
            content((ImageBytes = "image/png"), (ImageBytes = "image/jpeg"), (ImageBytes = "image/gif"),
                (ImageBytes = "image/webp"), (ImageBytes = "image/avif"))),
        (status = 304, description = "Unchanged (`If-None-Match`)"),
        (status = 404, body = Problem, description = "Unknown, malformed, or in a workspace the caller cannot see"),
        (status = 503, body = Problem)))]
async fn serve_upload(
    State(ctx): State<Ctx>,
    auth: AuthUser,
    Path(name): Path<String>,
    headers: HeaderMap,
) -> Result<Response> {
    let (file, content_type) = uploads::find(&ctx, &auth.user, &name).await?;
    // The name is the content's hash: the ETag never changes for a name.
    let hash = name.split('.').next().unwrap_or_default();
    let etag = format!("\"{hash}\"");
    let fresh = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim().trim_start_matches("W/") == etag || t.trim() == "*"));
    let mut res = if fresh {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        let len = file.metadata().await?.len();
        let mut res = Body::from_stream(tokio_util::io::ReaderStream::new(file)).into_response();
        let h = res.headers_mut();
        h.insert(header::CONTENT_TYPE, HeaderValue::from_str(&content_type).map_err(Error::internal)?);
        h.insert(header::CONTENT_LENGTH, HeaderValue::from(len));
        res
    };
    let h = res.headers_mut();
    h.insert(header::ETAG, HeaderValue::from_str(&etag).map_err(Error::internal)?);
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("private"));
    h.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(SERVED_CSP));
    h.insert(header::CONTENT_DISPOSITION, HeaderValue::from_static("inline"));
    h.insert("cross-origin-resource-policy", HeaderValue::from_static("same-origin"));
    Ok(res)
}
