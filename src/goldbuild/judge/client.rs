//! The two wire formats a judge speaks, over one small blocking HTTP client.
//!
//! - OpenAI chat completions: `POST {base}/chat/completions` with
//!   `Authorization: Bearer KEY`, body `{model, messages, temperature}`,
//!   answer in `choices[0].message.content`, tokens in `usage.prompt_tokens`
//!   / `usage.completion_tokens`. OpenAI, Azure (its deployment URL), vLLM,
//!   Ollama, llama.cpp's server and LM Studio all speak it.
//! - Anthropic Messages: `POST {base}/v1/messages` with `x-api-key: KEY` and
//!   `anthropic-version: 2023-06-01`, body `{model, max_tokens, messages,
//!   temperature}`, answer in the `text` blocks of `content`, tokens in
//!   `usage.input_tokens` / `usage.output_tokens`.
//!
//! Both put an error's words in `error.message` (and its kind in
//! `error.type` / `error.code`). Whatever a server says is passed through
//! [`Secret::scrub`] (some echo the key, or part of it, in a 401) and shown
//! as one escaped line: it is text from outside.
//!
//! Redirects are not followed: a POST with the key in a header is not sent
//! on to wherever a 3xx points; the message names the new URL instead.

use std::time::Duration;

use serde_json::{json, Value};

/// Which wire format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provider {
    OpenAi,
    Anthropic,
}

impl Provider {
    pub fn name(self) -> &'static str {
        match self {
            Provider::OpenAi => "openai",
            Provider::Anthropic => "anthropic",
        }
    }

    pub fn default_base_url(self) -> &'static str {
        match self {
            Provider::OpenAi => "https://api.openai.com/v1",
            Provider::Anthropic => "https://api.anthropic.com",
        }
    }

    pub fn default_key_env(self) -> &'static str {
        match self {
            Provider::OpenAi => "OPENAI_API_KEY",
            Provider::Anthropic => "ANTHROPIC_API_KEY",
        }
    }

    /// The API's endpoint under `base`; a query string of the base URL
    /// (`?api-version=…`, a proxy's `?key=…`) stays at the end.
    fn endpoint(self, base: &str) -> String {
        let (base, query) = match base.split_once('?') {
            Some((b, q)) => (b, format!("?{q}")),
            None => (base, String::new()),
        };
        let base = base.trim_end_matches('/');
        match self {
            Provider::OpenAi => format!("{base}/chat/completions{query}"),
            Provider::Anthropic => format!("{base}/v1/messages{query}"),
        }
    }
}

/// An API key: never formatted, only sent; [`Secret::scrub`] takes it out
/// of any text that came back.
#[derive(Clone, Default)]
pub struct Secret(Option<String>);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "Secret(set)"
        } else {
            "Secret(none)"
        })
    }
}

impl Secret {
    pub fn new(key: Option<String>) -> Secret {
        Secret(key.filter(|k| !k.is_empty()))
    }

    pub fn is_set(&self) -> bool {
        self.0.is_some()
    }

    /// `text` without the key, nor any word holding its first or last
    /// eight characters (a server's "incorrect key sk-ab…wxyz" echo), nor
    /// OpenAI's partial echo: the first 7 characters, `...` (or `…`, or
    /// `*`s) and the last 4 (`sk-abcd...wxyz`), nor `...` and the last 4
    /// alone. A text that is JSON is also read as JSON, so a key written
    /// with `\u` escapes is found too. The one scrubber every text from a
    /// server goes through ([`Client::server_text`]).
    pub fn scrub(&self, text: &str) -> String {
        let Some(key) = &self.0 else {
            return text.to_string();
        };
        let raw = scrub_key(key, text);
        if let Ok(v) = serde_json::from_str::<Value>(text) {
            let decoded = v.to_string();
            let scrubbed = scrub_key(key, &decoded);
            if scrubbed != decoded {
                return scrubbed;
            }
        }
        raw
    }
}

/// The characters a server masks the middle of a key with.
const MASK: [char; 3] = ['.', '…', '*'];

/// Whether `word` holds `head` right before a mask (`sk-abcd...`), or
/// `tail` right after one (`...wxyz`).
fn masked_echo(word: &str, head: &str, tail: &str) -> bool {
    let after_head = word
        .match_indices(head)
        .any(|(at, _)| word[at + head.len()..].starts_with(MASK));
    let before_tail = word.match_indices(tail).any(|(at, _)| word[..at].ends_with(MASK));
    after_head || before_tail
}

/// How long a piece of the key is enough to redact: any run of this many
/// of its characters, wherever a server echoes it (a key of 31 characters
/// shown but for its first and last 4 is 23 characters of it).
const KEY_PIECE: usize = 12;

/// `text` with every run of characters that holds a [`KEY_PIECE`]-long
/// piece of `key` redacted, out to the ends of the run: the key's middle
/// echoed without its head or tail is as secret as the whole.
fn scrub_pieces(key: &[char], text: &str) -> String {
    if key.len() < KEY_PIECE {
        return text.to_string();
    }
    let pieces: std::collections::HashSet<&[char]> = key.windows(KEY_PIECE).collect();
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    // Char positions covered by a piece of the key.
    let mut covered = vec![false; chars.len()];
    let window: Vec<char> = chars.iter().map(|c| c.1).collect();
    let mut any = false;
    for (i, w) in window.windows(KEY_PIECE).enumerate() {
        if pieces.contains(w) {
            any = true;
            for c in &mut covered[i..i + KEY_PIECE] {
                *c = true;
            }
        }
    }
    if !any {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        if !covered[i] {
            out.push(chars[i].1);
            i += 1;
            continue;
        }
        // The whole run of key-like (and mask) characters around the
        // piece; a sentence's full stop after it stays.
        let token =
            |c: char| c.is_alphanumeric() || "-_".contains(c) || MASK.contains(&c) || key.contains(&c);
        while out.chars().last().is_some_and(token) {
            out.pop();
        }
        let mut run = String::new();
        while i < chars.len() && (covered[i] || token(chars[i].1)) {
            run.push(chars[i].1);
            i += 1;
        }
        let kept = run.len()
            - run
                .trim_end_matches(|c: char| !c.is_alphanumeric() && !"*…".contains(c))
                .len();
        out.push_str("[key]");
        out.push_str(&run[run.len() - kept..]);
    }
    out
}

fn scrub_key(key: &str, text: &str) -> String {
    let out = text.replace(key, "[key]");
    let n = key.chars().count();
    if n < 12 {
        return out;
    }
    let key_chars: Vec<char> = key.chars().collect();
    let out = scrub_pieces(&key_chars, &out);
    let chars: Vec<char> = key.chars().collect();
    let head8: String = chars[..8].iter().collect();
    let tail8: String = chars[n - 8..].iter().collect();
    let head7: String = chars[..7].iter().collect();
    let tail4: String = chars[n - 4..].iter().collect();
    let long = n >= 16;
    // Tokens: runs of what a key or its mask is made of; a URL's `?k=` or
    // a sentence's words around an echo stay.
    let in_token =
        |c: char| c.is_alphanumeric() || MASK.contains(&c) || "-_".contains(c) || chars.contains(&c);
    let mut scrubbed = String::with_capacity(out.len());
    let mut rest = out.as_str();
    while !rest.is_empty() {
        let start = rest.find(in_token).unwrap_or(rest.len());
        scrubbed.push_str(&rest[..start]);
        rest = &rest[start..];
        let end = rest.find(|c: char| !in_token(c)).unwrap_or(rest.len());
        let w = &rest[..end];
        let hit = (long && (w.contains(&head8) || w.contains(&tail8))) || masked_echo(w, &head7, &tail4);
        if hit {
            // A sentence's full stop after the echo stays.
            let kept = w.len() - w.trim_end_matches(|c: char| !c.is_alphanumeric()).len();
            scrubbed.push_str("[key]");
            scrubbed.push_str(&w[w.len() - kept..]);
        } else {
            scrubbed.push_str(w);
        }
        rest = &rest[end..];
    }
    scrubbed
}

/// Query parameters whose value is a credential (compared without case,
/// `-` and `_`): `?api_key=`, `?key=`, `?token=`, `?access_token=`,
/// `?sig=` and their kin.
fn key_like(name: &str) -> bool {
    let n: String = name
        .chars()
        .filter(|c| !matches!(c, '-' | '_'))
        .flat_map(char::to_lowercase)
        .collect();
    [
        "key",
        "token",
        "secret",
        "password",
        "passwd",
        "pwd",
        "auth",
        "sig",
        "signature",
        "credential",
        "session",
    ]
    .iter()
    .any(|w| n.contains(w))
        || n == "code"
}

/// The parts of a URL: scheme and `://`, userinfo (without its `@`), the
/// rest of the authority and path, and the query (without its `?`, up to
/// any `#`).
fn url_parts(url: &str) -> (&str, Option<&str>, &str, Option<&str>, &str) {
    let (scheme, rest) = match url.find("://") {
        Some(i) => url.split_at(i + 3),
        None => ("", url),
    };
    let auth_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (userinfo, host_path) = match rest[..auth_end].rfind('@') {
        Some(at) => (Some(&rest[..at]), &rest[at + 1..]),
        None => (None, rest),
    };
    let (before_frag, frag) = match host_path.find('#') {
        Some(i) => host_path.split_at(i),
        None => (host_path, ""),
    };
    let (path, query) = match before_frag.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (before_frag, None),
    };
    (scheme, userinfo, path, query, frag)
}

/// `url` as it may be printed: userinfo (`user:pw@`) and the values of
/// key-like query parameters replaced by `[redacted]`.
pub fn redact_url(url: &str) -> String {
    let (scheme, userinfo, path, query, frag) = url_parts(url);
    let mut out = String::from(scheme);
    if userinfo.is_some() {
        out.push_str("[redacted]@");
    }
    out.push_str(path);
    if let Some(q) = query {
        out.push('?');
        let params: Vec<String> = q
            .split('&')
            .map(|p| match p.split_once('=') {
                Some((name, v)) if key_like(name) && !v.is_empty() => format!("{name}=[redacted]"),
                _ => p.to_string(),
            })
            .collect();
        out.push_str(&params.join("&"));
    }
    out.push_str(frag);
    out
}

/// The credentials in `url` (each part of the userinfo, key-like query
/// values), as written and percent-decoded, longest first: taken out of
/// any text shown (a transport error may quote the URL or a part of it).
fn url_secrets(url: &str) -> Vec<String> {
    let (_, userinfo, _, query, _) = url_parts(url);
    let mut out: Vec<String> = Vec::new();
    if let Some(u) = userinfo {
        out.push(u.to_string());
        out.extend(u.split(':').map(str::to_string));
    }
    for p in query.iter().flat_map(|q| q.split('&')) {
        if let Some((name, v)) = p.split_once('=') {
            if key_like(name) {
                out.push(v.to_string());
            }
        }
    }
    let decoded: Vec<String> = out.iter().map(|s| percent_decode(s)).collect();
    out.extend(decoded);
    // Too short to be told from ordinary text (`a`, `pw`) they are still
    // redacted from the URL itself, only not from every word.
    out.retain(|s| s.chars().count() >= 3);
    out.sort_by_key(|s| std::cmp::Reverse(s.len()));
    out.dedup();
    out
}

/// `%41` -> `A`; a bad escape stays as written.
fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() && b[i + 1].is_ascii_hexdigit() && b[i + 2].is_ascii_hexdigit() {
            let hex = |c: u8| (c as char).to_digit(16).unwrap_or(0) as u8;
            out.push(hex(b[i + 1]) * 16 + hex(b[i + 2]));
            i += 3;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Tokens an answer cost, where the server said.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    pub input: u64,
    pub output: u64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub text: String,
    pub usage: Option<Usage>,
}

/// Why a request gave no answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Failure {
    /// Worth retrying: 408, 429, 5xx, a timeout, a dropped connection.
    /// `retry_after` is what the server asked for.
    Transient {
        message: String,
        retry_after: Option<Duration>,
    },
    /// This pair failed (a 400 for an over-long passage, an answer with no
    /// text): counted, the run goes on.
    Pair(String),
    /// Every request would fail alike (a bad key, an unknown model, a
    /// wrong URL): the run stops.
    Fatal(String),
}

pub struct Client {
    agent: ureq::Agent,
    provider: Provider,
    url: String,
    /// `url` as it may be shown: credentials redacted ([`redact_url`]).
    shown_url: String,
    /// The URL's credentials (userinfo, key-like query values), redacted
    /// from any text shown, as the key is.
    url_secrets: Vec<String>,
    model: String,
    key: Secret,
    timeout: Duration,
}

/// An answer's body is a few hundred bytes; a server sending more is
/// broken, and is not read whole.
const BODY_LIMIT: u64 = 4 * 1024 * 1024;

/// The longest answer asked of an Anthropic model (the field is required
/// there): the default prompt wants one line, a reasoning model a little
/// more.
pub const MAX_TOKENS: u32 = 1024;

impl Client {
    pub fn new(provider: Provider, base_url: &str, model: &str, key: Secret, timeout: Duration) -> Client {
        let config = ureq::Agent::config_builder()
            .timeout_global(Some(timeout))
            .http_status_as_error(false)
            .max_redirects(0)
            .user_agent(concat!("rgate/", env!("CARGO_PKG_VERSION")))
            .build();
        let url = provider.endpoint(base_url);
        Client {
            agent: config.into(),
            provider,
            shown_url: redact_url(&url),
            url_secrets: url_secrets(&url),
            url,
            model: model.to_string(),
            key,
            timeout,
        }
    }

    /// The endpoint as it may be shown (credentials redacted).
    pub fn shown_url(&self) -> &str {
        &self.shown_url
    }

    /// The request body for `prompt`.
    pub fn body(&self, prompt: &str) -> Value {
        let messages = json!([{"role": "user", "content": prompt}]);
        match self.provider {
            Provider::OpenAi => json!({"model": self.model, "messages": messages, "temperature": 0}),
            Provider::Anthropic => json!({
                "model": self.model,
                "max_tokens": MAX_TOKENS,
                "messages": messages,
                "temperature": 0,
            }),
        }
    }

    /// One request, no retry.
    pub fn send(&self, prompt: &str) -> Result<Answer, Failure> {
        let mut req = self
            .agent
            .post(&self.url)
            .header("content-type", "application/json");
        if let Some(k) = &self.key.0 {
            req = match self.provider {
                Provider::OpenAi => req.header("authorization", format!("Bearer {k}")),
                Provider::Anthropic => req.header("x-api-key", k.as_str()),
            };
        }
        if self.provider == Provider::Anthropic {
            req = req.header("anthropic-version", "2023-06-01");
        }
        let mut resp = match req.send(self.body(prompt).to_string()) {
            Ok(r) => r,
            Err(e) => return Err(self.transport(e)),
        };
        let status = resp.status().as_u16();
        let header = |name: &str| {
            resp.headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string)
        };
        let retry_after = header("retry-after").and_then(|v| retry_after(&v, std::time::SystemTime::now()));
        let location = header("location");
        let body = resp.body_mut().with_config().limit(BODY_LIMIT).read_to_string();
        let body = match body {
            Ok(b) => b,
            Err(e) if (200..300).contains(&status) => {
                return Err(match e {
                    ureq::Error::Timeout(_) => self.timed_out(),
                    e => Failure::Pair(format!("cannot read the answer: {}", self.clean(&e.to_string()))),
                })
            }
            Err(_) => String::new(),
        };
        match status {
            200..=299 => self.parse(&body),
            300..=399 => Err(Failure::Fatal(format!(
                "{} answered {status}, a redirect to {}; rgate does not follow it with the key",
                self.shown_url,
                self.clean(location.as_deref().unwrap_or("(no location)"))
            ))),
            408 | 429 | 500..=599 => Err(Failure::Transient {
                message: self.status_message(status, &body),
                retry_after,
            }),
            401 | 403 | 404 => Err(Failure::Fatal(self.status_message(status, &body))),
            _ => Err(Failure::Pair(self.status_message(status, &body))),
        }
    }

    fn timed_out(&self) -> Failure {
        Failure::Transient {
            message: format!("no answer within {} s", self.timeout.as_secs_f64()),
            retry_after: None,
        }
    }

    fn transport(&self, e: ureq::Error) -> Failure {
        match e {
            ureq::Error::Timeout(_) => self.timed_out(),
            ureq::Error::Io(e) if unrecoverable(&e) => Failure::Fatal(format!(
                "cannot connect to {}: {}{}",
                self.shown_url,
                self.clean(&e.to_string()),
                if is_tls(&e) && self.url.starts_with("https://") {
                    " (is the server plain http://? then give --base-url http://…)"
                } else {
                    ""
                }
            )),
            ureq::Error::Io(e) => Failure::Transient {
                message: format!("the connection failed: {}", self.clean(&e.to_string())),
                retry_after: None,
            },
            ureq::Error::HostNotFound | ureq::Error::ConnectionFailed => Failure::Fatal(format!(
                "cannot connect to {}: {}",
                self.shown_url,
                self.clean(&e.to_string())
            )),
            e => Failure::Fatal(format!(
                "request to {} failed: {}",
                self.shown_url,
                self.clean(&e.to_string())
            )),
        }
    }

    /// Text from outside as one escaped line, without the key, at most
    /// 300 characters.
    fn clean(&self, text: &str) -> String {
        self.server_text(text, 300)
    }

    /// Any text a server sent (an answer, an error body, a header) as it
    /// may be shown: scrubbed of the key first ([`Secret::scrub`], before
    /// any cut could split the key past recognition), then one line of at
    /// most `max` characters, escaped for a terminal.
    pub fn server_text(&self, text: &str, max: usize) -> String {
        let mut s = self.key.scrub(text).replace(&self.url, &self.shown_url);
        for secret in &self.url_secrets {
            s = s.replace(secret.as_str(), "[redacted]");
        }
        let s = s.split_whitespace().collect::<Vec<_>>().join(" ");
        let mut out: String = s.chars().take(max).collect();
        if s.chars().count() > max {
            out.push('…');
        }
        crate::escape::terminal(&out).into_owned()
    }

    /// "HTTP 401 (authentication_error): invalid x-api-key": the status
    /// and what the server's `error` object says, or the start of its body.
    fn status_message(&self, status: u16, body: &str) -> String {
        let said = match serde_json::from_str::<Value>(body) {
            Ok(v) => {
                let e = v.get("error").unwrap_or(&v);
                let message = e
                    .get("message")
                    .and_then(Value::as_str)
                    .or_else(|| e.as_str())
                    .map(str::to_string);
                let kind = ["type", "code"]
                    .iter()
                    .find_map(|k| e.get(*k).and_then(|t| t.as_str().map(str::to_string)));
                match (kind, message) {
                    (Some(k), Some(m)) => format!(" ({}): {}", self.clean(&k), self.clean(&m)),
                    (None, Some(m)) => format!(": {}", self.clean(&m)),
                    _ => format!(": {}", self.clean(body)),
                }
            }
            Err(_) if body.trim().is_empty() => String::new(),
            Err(_) => format!(": {}", self.clean(body)),
        };
        format!("HTTP {status}{said}")
    }

    /// The answer's text and usage out of a 2xx body.
    fn parse(&self, body: &str) -> Result<Answer, Failure> {
        let v: Value = serde_json::from_str(body)
            .map_err(|e| Failure::Pair(format!("the answer is not JSON ({e}): {}", self.clean(body))))?;
        let num = |p: &str| v.pointer(p).and_then(Value::as_u64);
        let (text, usage) = match self.provider {
            Provider::OpenAi => (
                v.pointer("/choices/0/message/content")
                    .and_then(Value::as_str)
                    .map(str::to_string),
                num("/usage/prompt_tokens").map(|i| Usage {
                    input: i,
                    output: num("/usage/completion_tokens").unwrap_or(0),
                }),
            ),
            Provider::Anthropic => (
                v.get("content").and_then(Value::as_array).map(|blocks| {
                    blocks
                        .iter()
                        .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
                        .filter_map(|b| b.get("text").and_then(Value::as_str))
                        .collect::<Vec<_>>()
                        .join("\n")
                }),
                num("/usage/input_tokens").map(|i| Usage {
                    input: i,
                    output: num("/usage/output_tokens").unwrap_or(0),
                }),
            ),
        };
        match text {
            Some(text) if !text.trim().is_empty() => Ok(Answer { text, usage }),
            _ => Err(Failure::Pair(format!(
                "the answer holds no text where {} puts it: {}",
                self.provider.name(),
                self.clean(body)
            ))),
        }
    }
}

/// Whether a transport error is one every retry would meet alike: nothing
/// listens there (connection refused), or the TLS handshake failed (TLS
/// spoken to a plain-HTTP port, a certificate refused). A timeout, a reset
/// or a dropped connection may pass, and is retried.
fn unrecoverable(e: &std::io::Error) -> bool {
    use std::io::ErrorKind::*;
    is_tls(e)
        || matches!(
            e.kind(),
            ConnectionRefused
                | InvalidData
                | InvalidInput
                | PermissionDenied
                | AddrNotAvailable
                | Unsupported
        )
}

/// Whether an I/O error is a failed TLS handshake: rustls reports what
/// it could not read as TLS as invalid data.
fn is_tls(e: &std::io::Error) -> bool {
    e.kind() == std::io::ErrorKind::InvalidData
}

/// A `Retry-After` value: delay seconds, or an HTTP-date (RFC 9110
/// section 10.2.3; IMF-fixdate `Sun, 06 Nov 1994 08:49:37 GMT`), as the
/// time from `now` (none in the past: zero).
pub fn retry_after(value: &str, now: std::time::SystemTime) -> Option<Duration> {
    let v = value.trim();
    if let Ok(s) = v.parse::<u64>() {
        return Some(Duration::from_secs(s));
    }
    let at = http_date(v)?;
    let now = now.duration_since(std::time::UNIX_EPOCH).ok()?.as_secs() as i64;
    Some(Duration::from_secs((at - now).max(0) as u64))
}

/// Seconds since the epoch of an IMF-fixdate.
fn http_date(v: &str) -> Option<i64> {
    let (_, rest) = v.split_once(", ")?;
    let p: Vec<&str> = rest.split(' ').collect();
    if p.len() != 5 || p[4] != "GMT" {
        return None;
    }
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let m = MONTHS.iter().position(|&m| m == p[1])? + 1;
    let d: u32 = p[0].parse().ok()?;
    let y: u32 = p[2].parse().ok()?;
    crate::origin::parse_rfc3339(&format!("{y:04}-{m:02}-{d:02}T{}Z", p[3]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{SystemTime, UNIX_EPOCH};

    #[test]
    fn retry_after_reads_seconds_and_http_dates() {
        let now = UNIX_EPOCH + Duration::from_secs(784_111_777); // 1994-11-06T08:49:37Z
        assert_eq!(retry_after("7", now), Some(Duration::from_secs(7)));
        // `date -u -d @784111777` is Sun Nov  6 08:49:37 UTC 1994; 3 s later:
        assert_eq!(
            retry_after("Sun, 06 Nov 1994 08:49:40 GMT", now),
            Some(Duration::from_secs(3))
        );
        assert_eq!(
            retry_after("Sun, 06 Nov 1994 08:49:00 GMT", now),
            Some(Duration::ZERO)
        );
        assert_eq!(retry_after("soon", SystemTime::now()), None);
        assert_eq!(retry_after("Sun, 06 Nov 1994 08:49:40 PST", now), None);
    }

    #[test]
    fn scrub_removes_the_key_and_its_echoes() {
        let s = Secret::new(Some("sk-test-0123456789abcdefWXYZ".into()));
        let out = s
            .scrub("bad key sk-test-0123456789abcdefWXYZ, or sk-test-0***WXYZ? see 'sk-tes...89abcdefWXYZ'.");
        assert!(!out.contains("0123456789abcdef"), "{out}");
        assert!(!out.contains("sk-test-0"), "{out}");
        assert!(!out.contains("abcdefWXYZ"), "{out}");
        assert!(out.starts_with("bad key [key], or"), "{out}");
        assert_eq!(format!("{s:?}"), "Secret(set)");
    }

    /// Issue 48: any 12 characters of the key in a row are redacted, with
    /// the word around them; 11 are not (they could be anything).
    #[test]
    fn scrub_removes_any_twelve_character_piece_of_the_key() {
        let key = "sk-proj-ABCDEFGHIJ0123456789klmnopq"; // 35 characters
        let s = Secret::new(Some(key.into()));
        let chars: Vec<char> = key.chars().collect();
        for start in 0..=chars.len() - 12 {
            let piece: String = chars[start..start + 12].iter().collect();
            let out = s.scrub(&format!("bad key: xx{piece}yy, try again"));
            assert_eq!(out, "bad key: [key], try again", "piece at {start}");
        }
        // The middle 24 characters, as a server masked the ends.
        let middle: String = chars[4..28].iter().collect();
        assert_eq!(s.scrub(&format!("key ****{middle}****.")), "key [key].");
        let eleven: String = chars[10..21].iter().collect();
        assert_eq!(s.scrub(&format!("x {eleven} y")), format!("x {eleven} y"));
    }

    /// URL credentials: userinfo and key-like query values never shown.
    #[test]
    fn urls_are_shown_without_their_credentials() {
        assert_eq!(
            redact_url("https://ana:pw-9z@h.example:8443/v1/chat/completions?api_key=SEKRET&api-version=2024&token=T0K3N#f"),
            "https://[redacted]@h.example:8443/v1/chat/completions?api_key=[redacted]&api-version=2024&token=[redacted]#f"
        );
        assert_eq!(
            redact_url("http://h/v1?key=abc&x=1"),
            "http://h/v1?key=[redacted]&x=1"
        );
        assert_eq!(redact_url("http://h/v1"), "http://h/v1");
        // An @ in the path is no userinfo.
        assert_eq!(redact_url("http://h/a@b"), "http://h/a@b");
        let c = Client::new(
            Provider::OpenAi,
            "http://ana:pw-9z@127.0.0.1:9/v1?api_key=SEKRET%2Dx",
            "m",
            Secret::new(None),
            Duration::from_secs(1),
        );
        assert_eq!(
            c.shown_url(),
            "http://[redacted]@127.0.0.1:9/v1/chat/completions?api_key=[redacted]"
        );
        let shown = c.server_text("error for url (http://ana:pw-9z@127.0.0.1:9/v1/chat/completions?api_key=SEKRET%2Dx): SEKRET-x pw-9z", 300);
        for secret in ["pw-9z", "SEKRET", "ana:"] {
            assert!(!shown.contains(secret), "{shown}");
        }
    }

    #[test]
    fn scrub_removes_openais_partial_echo_and_escaped_keys() {
        let s = Secret::new(Some("sk-abcdEFGH0123456789wxyz".into()));
        // OpenAI's form: the first 7, "...", the last 4; and masked with *.
        assert_eq!(
            s.scrub("Incorrect API key provided: sk-abcd...wxyz. See docs."),
            "Incorrect API key provided: [key]. See docs."
        );
        assert_eq!(s.scrub("key=sk-abcd****wxyz&x=1"), "key=[key]&x=1");
        assert_eq!(s.scrub("ending in …wxyz"), "ending in [key]");
        assert_eq!(
            s.scrub("https://h/?k=sk-abcdEFGH0123456789wxyz"),
            "https://h/?k=[key]"
        );
        // The key written with JSON escapes is the key to a JSON reader.
        let escaped: String = "sk-abcdEFGH0123456789wxyz"
            .chars()
            .map(|c| format!("\\u{:04x}", c as u32))
            .collect();
        let out = s.scrub(&format!("{{\"m\": \"bad {escaped}\"}}"));
        assert_eq!(out, "{\"m\":\"bad [key]\"}");
        // Text without the key is left as it is.
        assert_eq!(
            s.scrub("{\"a\": 1} sk-other...zzzz"),
            "{\"a\": 1} sk-other...zzzz"
        );
    }
}
