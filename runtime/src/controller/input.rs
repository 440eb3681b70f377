//! A turn's images and files: checked, read once inside the session's workspace, images kept
//! among the session's attachments, and handed to the adapter read. What events carry is the
//! input as stored: an image's `data` is replaced by its `attachment`, `bytes` and `mimeType`; a
//! file gets its `bytes` and `mimeType`.

use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use base64::Engine;
use sha2::Digest;

use super::Controller;
use super::config::AttachmentConfig;
use super::error::{ControllerError, Result};
use ensemble_core::adapter::{InputKinds, Prompt, PromptFile, PromptImage};
use ensemble_core::limits::FieldError;
use ensemble_core::model::{InputItem, Session, SessionKey};

/// The image types a turn takes, with the file extension their attachment gets.
const IMAGE_TYPES: [(&str, &str); 4] =
    [("image/png", "png"), ("image/jpeg", "jpg"), ("image/gif", "gif"), ("image/webp", "webp")];

/// A turn's input resolved: as events carry it, and as the adapter gets it.
pub(super) struct Resolved {
    pub(super) stored: Vec<InputItem>,
    pub(super) prompt: Vec<Prompt>,
}

/// Checks what a client sends as a turn's input before anything of it is read or kept: at least one
/// item, text within `max_input_bytes` and none blank, and the names and paths of its images and
/// files within [`ensemble_core::limits::MAX_TEXT_CHARS`] (an image's name went into `turn.started` whole: a
/// 7 MB one made a 7 MB event).
pub(super) fn check(input: &[InputItem], max_input_bytes: usize) -> Result<()> {
    if input.is_empty() {
        return Err(ControllerError::InvalidInput("input must contain at least one item".into()));
    }
    let size: usize = input.iter().map(|i| i.text().len()).sum();
    ensemble_core::limits::check_bytes("input", size, max_input_bytes)?;
    if input.iter().any(|i| matches!(i, InputItem::Text { text } if ensemble_core::model::is_blank(text))) {
        return Err(ControllerError::InvalidInput("every text item needs text that is not blank".into()));
    }
    for (index, item) in input.iter().enumerate() {
        let texts = match item {
            InputItem::Text { .. } => continue,
            InputItem::Image { name, path, .. } => vec![("name", name.as_deref()), ("path", path.as_deref())],
            InputItem::File { path, .. } => vec![("path", Some(path.as_str()))],
        };
        for (field, text) in texts {
            if let Some(text) = text {
                ensemble_core::limits::check_text(&format!("input[{index}].{field}"), text)?;
            }
        }
    }
    Ok(())
}

fn invalid(index: usize, message: impl std::fmt::Display) -> ControllerError {
    ControllerError::InvalidInput(format!("input[{index}]: {message}"))
}

/// The type of an image by its first bytes (never by what the client says it is).
pub fn sniff_image(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some("image/jpeg")
    } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if bytes.len() >= 12 && bytes.starts_with(b"RIFF") && &bytes[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
    }
}

/// The directory a session's attachments are kept in (a hash: room and session ids may hold
/// characters a file name may not).
fn attachments_of(dir: &Path, key: &SessionKey) -> PathBuf {
    let mut h = sha2::Sha256::new();
    h.update(key.room_id.as_bytes());
    h.update([0]);
    h.update(key.session_id.as_bytes());
    let name: String = h.finalize().iter().take(12).map(|b| format!("{b:02x}")).collect();
    dir.join(name)
}

/// Whether `id` can name an attachment (`<64 hex>.<ext>`): nothing else is ever opened.
fn attachment_id_valid(id: &str) -> bool {
    id.split_once('.').is_some_and(|(hash, ext)| {
        hash.len() == 64
            && hash.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
            && IMAGE_TYPES.iter().any(|(_, e)| *e == ext)
    })
}

/// The MIME type of an attachment id's extension.
fn attachment_type(id: &str) -> Option<&'static str> {
    let ext = id.rsplit_once('.')?.1;
    IMAGE_TYPES.iter().find(|(_, e)| *e == ext).map(|(t, _)| *t)
}

/// `rel` made absolute against `cwd`, `..` taken apart lexically; `None` if it leaves `top`.
fn inside(top: &Path, cwd: &Path, rel: &str) -> Option<PathBuf> {
    let joined = cwd.join(rel);
    let mut out = PathBuf::new();
    for c in joined.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out.starts_with(top).then_some(out)
}

/// Resolves `input` for a turn of `session`, whose provider takes `kinds`.
pub(super) fn resolve(
    config: &AttachmentConfig,
    session: &Session,
    kinds: &InputKinds,
    input: Vec<InputItem>,
) -> Result<Resolved> {
    let cwd = PathBuf::from(&session.cwd);
    let top = session
        .workspace
        .as_ref()
        .filter(|w| w.kind == ensemble_core::model::WorkspaceKind::Worktree)
        .and_then(|w| w.path.as_deref())
        .map_or_else(|| cwd.clone(), PathBuf::from);
    let mut root: Option<ensemble_files::Root> = None;
    let open_root = || -> Result<ensemble_files::Root> {
        ensemble_files::Root::open(&top, config.guard.clone())
            .map_err(|e| ControllerError::InvalidInput(format!("the session's workspace cannot be read: {e}")))
    };
    let mut total: u64 = 0;
    let mut stored = Vec::with_capacity(input.len());
    let mut prompt = Vec::with_capacity(input.len());
    for (index, item) in input.into_iter().enumerate() {
        let unsupported = |kind: &str, why: &Option<String>| match why {
            Some(reason) => Err(ControllerError::InputUnsupported(format!("input[{index}] is {kind}: {reason}"))),
            None => Ok(()),
        };
        match item {
            InputItem::Text { text } => {
                prompt.push(Prompt::Text(text.clone()));
                stored.push(InputItem::Text { text });
            }
            InputItem::Image { data, mime_type, path: given, name, attachment, bytes } => {
                unsupported("an image", &kinds.image)?;
                if attachment.is_some() || bytes.is_some() {
                    return Err(invalid(index, "`attachment` and `bytes` are set by the server"));
                }
                let (data, path) = match (&data, &given) {
                    (Some(data), None) => {
                        let decoded = base64::engine::general_purpose::STANDARD
                            .decode(data.trim())
                            .map_err(|e| invalid(index, format!("`data` is not base64: {e}")))?;
                        (decoded, None)
                    }
                    (None, Some(rel)) => {
                        let path = inside(&top, &cwd, rel)
                            .ok_or_else(|| invalid(index, format!("`{rel}` is outside the session's workspace")))?;
                        let r = match &root {
                            Some(r) => r,
                            None => root.insert(open_root()?),
                        };
                        let bytes = r.read(&path, config.max_image_bytes).map_err(|e| match e {
                            ensemble_files::FileError::TooLarge(_) => {
                                ControllerError::from(too_large(index, "image", config.max_image_bytes))
                            }
                            other => invalid(index, format!("the image `{rel}`: {other}")),
                        })?;
                        (bytes, Some(path))
                    }
                    _ => return Err(invalid(index, "an image needs `data` (with `mimeType`) or `path`, not both")),
                };
                if data.len() as u64 > config.max_image_bytes {
                    return Err(too_large(index, "image", config.max_image_bytes).into());
                }
                let mime = sniff_image(&data).ok_or_else(|| invalid(index, "not a PNG, JPEG, GIF or WebP image"))?;
                if given.is_none() && mime_type.as_deref() != Some(mime) {
                    return Err(invalid(index, format!("`mimeType` must be the image's type: its bytes are {mime}")));
                }
                total += data.len() as u64;
                check_total(index, total, config.max_turn_bytes)?;
                let (attachment, kept) = keep(config, &session.key(), mime, &data)?;
                prompt.push(Prompt::Image(PromptImage {
                    mime_type: mime.to_owned(),
                    data: Arc::from(data.as_slice()),
                    kept: Some(kept),
                    path,
                    name: name.clone(),
                }));
                stored.push(InputItem::Image {
                    data: None,
                    mime_type: Some(mime.to_owned()),
                    path: given,
                    name,
                    attachment: Some(attachment),
                    bytes: Some(data.len() as u64),
                });
            }
            InputItem::File { path: given, bytes, mime_type } => {
                unsupported("a file", &kinds.file)?;
                if bytes.is_some() || mime_type.is_some() {
                    return Err(invalid(index, "`bytes` and `mimeType` of a file are set by the server"));
                }
                let path = inside(&top, &cwd, &given)
                    .ok_or_else(|| invalid(index, format!("`{given}` is outside the session's workspace")))?;
                let r = match &root {
                    Some(r) => r,
                    None => root.insert(open_root()?),
                };
                let (size, content) = r
                    .read_up_to(&path, config.max_embedded_file_bytes)
                    .map_err(|e| invalid(index, format!("the file `{given}`: {e}")))?;
                let mime = match &content {
                    Some(c) => sniff_image(c).unwrap_or(if std::str::from_utf8(c).is_ok() {
                        "text/plain"
                    } else {
                        "application/octet-stream"
                    }),
                    None => "application/octet-stream",
                };
                if let Some(c) = &content {
                    total += c.len() as u64;
                    check_total(index, total, config.max_turn_bytes)?;
                }
                prompt.push(Prompt::File(PromptFile {
                    path,
                    name: given.clone(),
                    size,
                    mime_type: mime.to_owned(),
                    content: content.map(|c| Arc::from(c.as_slice())),
                }));
                stored.push(InputItem::File { path: given, bytes: Some(size), mime_type: Some(mime.to_owned()) });
            }
        }
    }
    Ok(Resolved { stored, prompt })
}

/// The adapter's items of input resolved before (a queued turn's, as stored): its images read
/// from where they are kept, its files read again.
pub(super) fn reprompt(config: &AttachmentConfig, session: &Session, stored: &[InputItem]) -> Result<Vec<Prompt>> {
    let mut out = Vec::with_capacity(stored.len());
    for (index, item) in stored.iter().enumerate() {
        match item {
            InputItem::Text { text } => out.push(Prompt::Text(text.clone())),
            InputItem::Image { mime_type, path, name, attachment, .. } => {
                let (Some(dir), Some(id)) = (&config.dir, attachment) else {
                    return Err(invalid(index, "the image is not kept any more"));
                };
                if !attachment_id_valid(id) {
                    return Err(invalid(index, "the image is not kept any more"));
                }
                let kept = attachments_of(dir, &session.key()).join(id);
                let data =
                    std::fs::read(&kept).map_err(|e| invalid(index, format!("the image is not kept any more: {e}")))?;
                out.push(Prompt::Image(PromptImage {
                    mime_type: mime_type.clone().or_else(|| attachment_type(id).map(str::to_owned)).unwrap_or_default(),
                    data: Arc::from(data.as_slice()),
                    path: path.as_ref().map(PathBuf::from),
                    kept: Some(kept),
                    name: name.clone(),
                }));
            }
            InputItem::File { path, .. } => {
                let again = InputItem::File { path: path.clone(), bytes: None, mime_type: None };
                let mut r = resolve(config, session, &InputKinds::all(), vec![again])?;
                out.append(&mut r.prompt);
            }
        }
    }
    Ok(out)
}

fn too_large(index: usize, what: &str, max: u64) -> FieldError {
    let field = format!("input[{index}]");
    FieldError {
        code: "invalid_input",
        message: format!("{field}: the {what} is larger than the limit of {max} bytes"),
        details: Box::new(serde_json::json!({ "field": field, "maxBytes": max })),
        field,
    }
}

fn check_total(index: usize, total: u64, max: u64) -> Result<()> {
    if total > max {
        let field = format!("input[{index}]");
        return Err(FieldError {
            code: "invalid_input",
            message: format!("the turn's images and files come to more than the limit of {max} bytes"),
            details: Box::new(serde_json::json!({ "field": field, "maxBytes": max })),
            field,
        }
        .into());
    }
    Ok(())
}

/// Writes the image among the session's attachments (named by its SHA-256: the same image twice
/// is kept once) and returns its id and where it is.
fn keep(config: &AttachmentConfig, key: &SessionKey, mime: &str, data: &[u8]) -> Result<(String, PathBuf)> {
    let Some(dir) = &config.dir else {
        return Err(ControllerError::InputUnsupported("this server keeps no attachments".into()));
    };
    let ext = IMAGE_TYPES.iter().find(|(t, _)| *t == mime).map_or("bin", |(_, e)| e);
    let hash: String = sha2::Sha256::digest(data).iter().map(|b| format!("{b:02x}")).collect();
    let id = format!("{hash}.{ext}");
    let dir = attachments_of(dir, key);
    let path = dir.join(&id);
    if path.exists() {
        return Ok((id, path));
    }
    let io = |e: std::io::Error| ControllerError::InvalidInput(format!("the image could not be kept: {e}"));
    std::fs::create_dir_all(&dir).map_err(io)?;
    // Written aside, then renamed: a reader never sees half an image.
    let tmp = dir.join(format!(".{id}.{}", std::process::id()));
    std::fs::write(&tmp, data).map_err(io)?;
    std::fs::rename(&tmp, &path).map_err(io)?;
    Ok((id, path))
}

impl Controller {
    /// An image of one of the session's turns: its MIME type and bytes.
    pub async fn attachment(&self, key: &SessionKey, id: &str) -> Result<(&'static str, Vec<u8>)> {
        self.snapshot(key)?;
        let not_found = || ControllerError::AttachmentNotFound(id.to_owned());
        let (Some(dir), Some(mime)) = (&self.inner.config.attachments.dir, attachment_type(id)) else {
            return Err(not_found());
        };
        if !attachment_id_valid(id) {
            return Err(not_found());
        }
        let path = attachments_of(dir, key).join(id);
        match tokio::fs::read(&path).await {
            Ok(bytes) => Ok((mime, bytes)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(not_found()),
            Err(e) => Err(ControllerError::InvalidInput(format!("the attachment could not be read: {e}"))),
        }
    }

    /// Removes the session's kept images (its purge).
    pub(super) async fn purge_attachments(&self, key: &SessionKey) {
        let Some(dir) = &self.inner.config.attachments.dir else { return };
        let dir = attachments_of(dir, key);
        if let Err(e) = tokio::fs::remove_dir_all(&dir).await
            && e.kind() != std::io::ErrorKind::NotFound
        {
            tracing::warn!(session = %key, error = %e, "removing the session's attachments failed");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_are_told_by_their_bytes() {
        assert_eq!(sniff_image(b"\x89PNG\r\n\x1a\nrest"), Some("image/png"));
        assert_eq!(sniff_image(&[0xFF, 0xD8, 0xFF, 0xE0]), Some("image/jpeg"));
        assert_eq!(sniff_image(b"GIF89a.."), Some("image/gif"));
        assert_eq!(sniff_image(b"RIFF\0\0\0\0WEBPVP8 "), Some("image/webp"));
        assert_eq!(sniff_image(b"<svg xmlns="), None, "no SVG: it is a script container");
        assert_eq!(sniff_image(b""), None);
    }

    #[test]
    fn attachment_ids_are_a_hash_and_a_known_extension() {
        let hash = "a".repeat(64);
        assert!(attachment_id_valid(&format!("{hash}.png")));
        assert_eq!(attachment_type(&format!("{hash}.jpg")), Some("image/jpeg"));
        for bad in [format!("{hash}.svg"), format!("{}.png", "A".repeat(64)), "../x.png".into(), hash] {
            assert!(!attachment_id_valid(&bad), "{bad}");
        }
    }

    #[test]
    fn paths_stay_inside_the_workspace() {
        let (top, cwd) = (Path::new("/w"), Path::new("/w/src"));
        assert_eq!(inside(top, cwd, "a.rs"), Some(PathBuf::from("/w/src/a.rs")));
        assert_eq!(inside(top, cwd, "../README.md"), Some(PathBuf::from("/w/README.md")));
        assert_eq!(inside(top, cwd, "/w/x"), Some(PathBuf::from("/w/x")));
        assert_eq!(inside(top, cwd, "../../etc/passwd"), None);
        assert_eq!(inside(top, cwd, "/etc/passwd"), None);
    }
}
