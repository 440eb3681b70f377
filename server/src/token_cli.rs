//! `ensemble token create|list|revoke`: the running server's tokens, managed over its own API
//! with the token file's (admin) token, so a revocation reaches its open sockets at once.

use anyhow::{Context, bail};
use serde_json::{Value, json};

use crate::config::{LocalArgs, TokenAction};
use crate::runs;

/// Runs one action; returns what goes to stdout.
pub async fn run(local: &LocalArgs, action: &TokenAction) -> anyhow::Result<String> {
    let data_dir = local.data_dir();
    let url = runs::running(&data_dir)?.url;
    let admin = runs::token(&data_dir)?;
    let http = reqwest::Client::builder().timeout(std::time::Duration::from_secs(30)).build()?;
    let call = |req: reqwest::RequestBuilder| async {
        let res = req.bearer_auth(&admin).send().await.with_context(|| format!("asking the server at {url}"))?;
        let status = res.status();
        let body: Value = res.json().await.unwrap_or(Value::Null);
        if !status.is_success() {
            let e = &body["error"];
            bail!(
                "{} ({} {})",
                e["message"].as_str().unwrap_or("the server refused"),
                status.as_u16(),
                e["code"].as_str().unwrap_or("")
            );
        }
        Ok(body)
    };
    match action {
        TokenAction::Create { role, rooms, name, ttl, qr } => {
            let mut body = json!({ "name": name, "role": role, "rooms": rooms });
            if let Some(ttl) = ttl {
                body["ttlSecs"] = json!(ttl);
            }
            let made = call(http.post(format!("{url}/v1/tokens")).json(&body)).await?;
            let t = &made["token"];
            eprintln!(
                "made {} ({}, rooms {}, {}); the secret is shown only now",
                t["id"].as_str().unwrap_or("?"),
                t["role"].as_str().unwrap_or("?"),
                rooms.join(","),
                expiry(t)
            );
            let secret = made["secret"].as_str().unwrap_or_default().to_owned();
            // The secret alone on stdout (for scripts); the link a person opens on stderr, as
            // Share… shows it.
            let link = console_url(&url, &secret, rooms);
            eprintln!("console: {link}");
            if *qr {
                eprintln!("{}", qr_text(&link)?);
            }
            Ok(secret)
        }
        TokenAction::List { json } => {
            let list = call(http.get(format!("{url}/v1/tokens"))).await?;
            if *json {
                return Ok(serde_json::to_string_pretty(&list)?);
            }
            let mut out =
                format!("{:<22} {:<20} {:<9} {:<20} {:<26} {}", "ID", "NAME", "ROLE", "ROOMS", "EXPIRES", "STATE");
            for t in list["data"].as_array().into_iter().flatten() {
                let rooms: Vec<&str> = t["rooms"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
                let state = if t["revokedAtMs"].is_number() {
                    "revoked"
                } else if t["active"] == true {
                    "active"
                } else {
                    "expired"
                };
                out.push_str(&format!(
                    "\n{:<22} {:<20} {:<9} {:<20} {:<26} {state}",
                    t["id"].as_str().unwrap_or(""),
                    t["name"].as_str().unwrap_or(""),
                    t["role"].as_str().unwrap_or(""),
                    rooms.join(","),
                    expiry(t)
                ));
            }
            Ok(out)
        }
        TokenAction::Revoke { id } => {
            let t = call(http.delete(format!("{url}/v1/tokens/{}", urlencode(id)))).await?;
            Ok(format!("revoked {}", t["id"].as_str().unwrap_or(id)))
        }
    }
}

fn expiry(t: &Value) -> String {
    let Some(at) = t["expiresAtMs"].as_i64() else { return "no expiry".to_owned() };
    let left_ms = at - crate::access::tokens::now_ms();
    if left_ms <= 0 {
        return "expired".to_owned();
    }
    // To the nearest minute: a token made with `--ttl 7d` a moment ago expires "in 7d 0h".
    let left = (left_ms + 30_000) / 60_000 * 60;
    let (d, h, m) = (left / 86_400, left % 86_400 / 3600, left % 3600 / 60);
    match (d, h) {
        (0, 0) => format!("expires in {}m", m.max(1)),
        (0, _) => format!("expires in {h}h {m}m"),
        _ => format!("expires in {d}d {h}h"),
    }
}

/// The console URL for `secret`, opening its room when the token reaches one room.
fn console_url(base: &str, secret: &str, rooms: &[String]) -> String {
    let room = match rooms {
        [room] if room != "*" => Some(room.as_str()),
        _ => None,
    };
    crate::routes::system::console_url(base, secret, room)
}

/// `text` as a QR code in a terminal: two modules per character, light on dark (what a terminal
/// with a dark background shows; a camera reads either), with its quiet zone.
fn qr_text(text: &str) -> anyhow::Result<String> {
    use qrcode::render::unicode::Dense1x2;
    let code = qrcode::QrCode::new(text.as_bytes()).context("the console URL is too long for a QR code")?;
    Ok(code.render::<Dense1x2>().dark_color(Dense1x2::Light).light_color(Dense1x2::Dark).quiet_zone(true).build())
}

fn urlencode(s: &str) -> String {
    form_urlencoded::byte_serialize(s.as_bytes()).collect()
}
