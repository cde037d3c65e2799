//! `gold judge` against a local model server: real HTTP on 127.0.0.1 that
//! speaks the OpenAI chat-completions and the Anthropic Messages formats,
//! answers deterministically (a passage's `[gN]` marker is its grade), and,
//! on other markers, answers 429 with `Retry-After`, 500, slowly, with a
//! malformed body or an ambiguous grade; it counts the requests in flight.
//! No network beyond the loopback; no new dev-dependency.

use std::collections::HashMap;
use std::fs;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use crate::common::{rgate, run, Out};

const KEY: &str = "sk-test-SECRET0123456789abcdefKEYEND";

/// One request as the server saw it.
#[derive(Debug, Clone)]
struct Seen {
    path: String,
    headers: HashMap<String, String>,
    body: Value,
    at: Instant,
}

impl Seen {
    /// The prompt the client sent.
    fn prompt(&self) -> String {
        self.body["messages"][0]["content"]
            .as_str()
            .unwrap_or("")
            .to_string()
    }
}

#[derive(Default)]
struct State {
    seen: Mutex<Vec<Seen>>,
    in_flight: AtomicUsize,
    max_in_flight: AtomicUsize,
    /// Attempts per prompt so far.
    attempts: Mutex<HashMap<String, usize>>,
    /// `[hold]` requests wait until this many are in flight (or 2 s pass),
    /// then 100 ms more, in which a client without a bound would send more.
    hold_for: AtomicUsize,
}

struct Server {
    addr: String,
    state: Arc<State>,
}

impl Server {
    fn start() -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = format!("http://{}", listener.local_addr().unwrap());
        let state = Arc::new(State::default());
        let s = state.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let s = s.clone();
                std::thread::spawn(move || {
                    let _ = serve(stream, &s);
                });
            }
        });
        Server { addr, state }
    }

    fn seen(&self) -> Vec<Seen> {
        self.state.seen.lock().unwrap().clone()
    }

    fn requests(&self) -> usize {
        self.state.seen.lock().unwrap().len()
    }

    fn reset(&self) {
        self.state.seen.lock().unwrap().clear();
        self.state.attempts.lock().unwrap().clear();
        self.state.max_in_flight.store(0, Ordering::SeqCst);
    }
}

struct Reply {
    status: u16,
    headers: Vec<(&'static str, String)>,
    body: String,
}

fn serve(stream: TcpStream, state: &State) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let path = line.split(' ').nth(1).unwrap_or("").to_string();
    let mut headers = HashMap::new();
    loop {
        let mut h = String::new();
        reader.read_line(&mut h)?;
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
        }
    }
    let len: usize = headers
        .get("content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; len];
    reader.read_exact(&mut body)?;
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let seen = Seen {
        path,
        headers,
        body,
        at: Instant::now(),
    };
    state.seen.lock().unwrap().push(seen.clone());
    let now = state.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
    state.max_in_flight.fetch_max(now, Ordering::SeqCst);
    let reply = answer(&seen, state);
    state.in_flight.fetch_sub(1, Ordering::SeqCst);
    let mut w = stream;
    let mut head = format!(
        "HTTP/1.1 {} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n",
        reply.status,
        reply.body.len()
    );
    for (k, v) in &reply.headers {
        head += &format!("{k}: {v}\r\n");
    }
    head += "\r\n";
    w.write_all(head.as_bytes())?;
    w.write_all(reply.body.as_bytes())?;
    w.flush()
}

/// What the server answers: the wire format by path, the grade and the
/// misbehaviour by markers in the prompt.
fn answer(seen: &Seen, state: &State) -> Reply {
    let anthropic = match seen.path.as_str() {
        "/v1/chat/completions" => false,
        "/v1/messages" => true,
        p => {
            return json_reply(
                404,
                json!({"error": {"message": format!("no route {p}"), "type": "not_found"}}),
            )
        }
    };
    let key = if anthropic {
        seen.headers.get("x-api-key").cloned()
    } else {
        seen.headers
            .get("authorization")
            .and_then(|v| v.strip_prefix("Bearer ").map(str::to_string))
    };
    if key.as_deref() != Some(KEY) {
        // As some providers do: the key it got, echoed back.
        return json_reply(
            401,
            json!({"error": {"message": format!("Incorrect API key provided: {}", key.unwrap_or_default()), "type": "invalid_request_error", "code": "invalid_api_key"}}),
        );
    }
    if anthropic && seen.headers.get("anthropic-version").map(String::as_str) != Some("2023-06-01") {
        return json_reply(
            400,
            json!({"type": "error", "error": {"type": "invalid_request_error", "message": "anthropic-version missing"}}),
        );
    }
    let model = seen.body["model"].as_str().unwrap_or("");
    if model == "no-such-model" {
        return json_reply(
            404,
            json!({"type": "error", "error": {"type": "not_found_error", "message": "model: no-such-model"}}),
        );
    }
    let prompt = seen.prompt();
    if let Some(reply) = echo(&prompt, anthropic) {
        return reply;
    }
    let attempt = {
        let mut a = state.attempts.lock().unwrap();
        let n = a.entry(prompt.clone()).or_insert(0);
        *n += 1;
        *n
    };
    if prompt.contains("[hold]") {
        let start = Instant::now();
        while state.in_flight.load(Ordering::SeqCst) < state.hold_for.load(Ordering::SeqCst)
            && start.elapsed() < Duration::from_secs(2)
        {
            std::thread::sleep(Duration::from_millis(5));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    if prompt.contains("[429]") && attempt == 1 {
        return Reply {
            status: 429,
            headers: vec![("retry-after", "1".into())],
            body: json!({"error": {"message": "rate limited", "type": "rate_limit_error"}}).to_string(),
        };
    }
    if prompt.contains("[500once]") && attempt == 1 || prompt.contains("[500always]") {
        return Reply {
            status: 500,
            headers: vec![("retry-after", "0".into())],
            body: "<html>upstream error</html>".into(),
        };
    }
    if prompt.contains("[slow]") && attempt == 1 {
        std::thread::sleep(Duration::from_millis(2500));
    }
    if prompt.contains("[garbage]") {
        return Reply {
            status: 200,
            headers: vec![],
            body: "{\"choices\": [ {\"mess".into(),
        };
    }
    let text = if prompt.contains("[ambiguous]") {
        "Grade: 1\nGrade: 3".to_string()
    } else if prompt.contains("[minus1]") {
        "M: 2\nT: 1\n##final score: -1".to_string()
    } else if prompt.contains("[minus3]") {
        "Grade: -3".to_string()
    } else {
        // `[gN]` is the grade; a passage without one (a canary) gets 2, as
        // a judge fooled by the query's words would. Under a `P=` prompt a
        // passage that names a grade 0..3 gets it, as a judge that obeys
        // what the passage tells it would; unless the prompt says
        // `[resist]`, then a canary gets 0.
        let passage = prompt.split_once("\nP=").map(|(_, p)| p);
        let told = passage.and_then(|p| p.chars().rev().find(|c| ('0'..='3').contains(c)));
        let g = prompt
            .find("[g")
            .and_then(|i| prompt[i + 2..].chars().next())
            .and_then(|c| c.to_digit(10))
            .or_else(|| prompt.contains("[resist]").then_some(0))
            .or_else(|| told.and_then(|c| c.to_digit(10)))
            .unwrap_or(2);
        format!("M: 2\nT: 1\n##final score: {g}")
    };
    json_reply(
        200,
        if anthropic {
            json!({"type": "message", "role": "assistant", "content": [{"type": "text", "text": text}], "usage": {"input_tokens": 10, "output_tokens": 3}})
        } else {
            json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": text}}], "usage": {"prompt_tokens": 10, "completion_tokens": 3}})
        },
    )
}

/// OpenAI's partial echo of a key: its first 7 characters, `...`, its
/// last 4 (written out, not computed by the code under test).
const KEY_PARTIAL: &str = "sk-test...YEND";

/// The key with every character a JSON `\u` escape: the same string to a
/// JSON reader, other bytes to a plain search.
fn key_escaped() -> String {
    KEY.chars().map(|c| format!("\\u{:04x}", c as u32)).collect()
}

/// A server that echoes the key back, on `[echo…]` markers: in an answer
/// with no grade, a 2xx body that is not JSON or holds no text, a 400,
/// 404 or 500 error body, and a redirect's `Location` header; each time
/// the whole key, its partial form and its `\u`-escaped form.
fn echo(prompt: &str, anthropic: bool) -> Option<Reply> {
    let said = format!("key {KEY} (shown as {KEY_PARTIAL})");
    let raw = |status: u16, headers: Vec<(&'static str, String)>, body: String| {
        Some(Reply {
            status,
            headers,
            body,
        })
    };
    let error = |status: u16| {
        raw(
            status,
            vec![],
            format!(
                "{{\"error\": {{\"message\": \"{said} / \\\"{}\\\"\", \"type\": \"{KEY_PARTIAL}\"}}}}",
                key_escaped()
            ),
        )
    };
    if prompt.contains("[echo-answer]") {
        let text = format!("I cannot grade this, {said}");
        return Some(json_reply(
            200,
            if anthropic {
                json!({"type": "message", "content": [{"type": "text", "text": text}], "usage": {"input_tokens": 10, "output_tokens": 3}})
            } else {
                json!({"choices": [{"message": {"content": text}}], "usage": {"prompt_tokens": 10, "completion_tokens": 3}})
            },
        ));
    }
    if prompt.contains("[echo-notjson]") {
        return raw(200, vec![], format!("<html>{said}</html>"));
    }
    if prompt.contains("[echo-notext]") {
        return raw(
            200,
            vec![],
            format!("{{\"echo\": \"{}\", \"also\": \"{KEY_PARTIAL}\"}}", key_escaped()),
        );
    }
    if prompt.contains("[echo-400]") {
        return error(400);
    }
    if prompt.contains("[echo-middle]") {
        // Issue 48: the key but its first 8 and last 3 characters (written
        // out: 25 of KEY's 36).
        return raw(
            400,
            vec![],
            "{\"error\": {\"message\": \"key ****SECRET0123456789abcdefKEY**** is not valid\"}}".into(),
        );
    }
    if prompt.contains("[echo-404]") {
        return error(404);
    }
    if prompt.contains("[echo-500]") {
        return raw(
            500,
            vec![("retry-after", "0".into()), ("x-echo", KEY.into())],
            format!("<html>upstream error, {said}</html>"),
        );
    }
    if prompt.contains("[echo-302]") {
        return raw(
            302,
            vec![(
                "location",
                format!("https://elsewhere.example/?key={KEY}&k={KEY_PARTIAL}"),
            )],
            String::new(),
        );
    }
    None
}

fn json_reply(status: u16, body: Value) -> Reply {
    Reply {
        status,
        headers: vec![],
        body: body.to_string(),
    }
}

fn row(q: &str, query: &str, c: &str, text: &str) -> Value {
    json!({"query_id": q, "query": query, "stratum": "s", "chunk_id": c, "text": text, "grade": null, "source": null, "labeler": null, "verified": false})
}

fn person(q: &str, query: &str, c: &str, text: &str, grade: i32) -> Value {
    json!({"query_id": q, "query": query, "stratum": "s", "chunk_id": c, "text": text, "grade": grade, "source": "person", "labeler": "ana", "verified": true})
}

fn write_sheet(dir: &Path, name: &str, rows: &[Value]) -> PathBuf {
    let p = dir.join(name);
    let text: String = rows.iter().map(|r| format!("{r}\n")).collect();
    fs::write(&p, text).unwrap();
    p
}

fn read_sheet(p: &Path) -> Vec<Value> {
    fs::read_to_string(p)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// `rgate gold judge SHEET ARGS…` with the key set and no proxy in the way.
fn judge(server: &Server, sheet: &Path, args: &[&str]) -> Out {
    let mut c = rgate();
    for v in [
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "http_proxy",
        "https_proxy",
        "all_proxy",
    ] {
        c.env_remove(v);
    }
    c.env_remove("ANTHROPIC_API_KEY")
        .env("OPENAI_API_KEY", KEY)
        .env("MY_KEY", KEY)
        .args(["gold", "judge"])
        .arg(sheet)
        .args(["--base-url", &format!("{}/v1", server.addr)])
        .args(args);
    run(c)
}

fn sha256_hex(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[test]
fn grades_are_stored_with_provenance_and_a_persons_grade_is_untouched() {
    let server = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let sheet = write_sheet(
        dir.path(),
        "sheet.jsonl",
        &[
            row("q1", "rotate an api key", "c1", "Keys rotate under Settings [g2]"),
            row("q1", "rotate an api key", "c2", "Our office hours [g0]"),
            person(
                "q2",
                "delete a project",
                "c3",
                "Projects are deleted from [g3]",
                1,
            ),
        ],
    );
    let template = "Query: {query}\nPassage: {passage}\nGrade 0-3.";
    let prompt = dir.path().join("prompt.txt");
    fs::write(&prompt, template).unwrap();
    let o = judge(
        &server,
        &sheet,
        &["--model", "judge-1", "--prompt", prompt.to_str().unwrap()],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    let rows = read_sheet(&sheet);
    let hash = sha256_hex(template);
    for (r, grade) in [(&rows[0], 2), (&rows[1], 0)] {
        assert_eq!(r["grade"], grade, "{r}");
        assert_eq!(r["source"], "model");
        assert_eq!(r["verified"], false);
        assert_eq!(r["labeler"], "judge-1");
        assert_eq!(r["prompt"], hash.as_str());
        assert!(r["labeled_at"].is_string());
    }
    // The person's grade: exactly as it was, and not even asked about.
    assert_eq!(
        rows[2],
        person(
            "q2",
            "delete a project",
            "c3",
            "Projects are deleted from [g3]",
            1
        )
    );
    let seen = server.seen();
    assert_eq!(seen.len(), 2);
    let mut prompts: Vec<String> = seen.iter().map(Seen::prompt).collect();
    prompts.sort();
    assert_eq!(
        prompts,
        [
            "Query: rotate an api key\nPassage: Keys rotate under Settings [g2]\nGrade 0-3.",
            "Query: rotate an api key\nPassage: Our office hours [g0]\nGrade 0-3.",
        ]
    );
    // The OpenAI wire format.
    assert_eq!(seen[0].path, "/v1/chat/completions");
    assert_eq!(seen[0].headers["authorization"], format!("Bearer {KEY}"));
    assert_eq!(seen[0].body["model"], "judge-1");
    assert_eq!(seen[0].body["messages"][0]["role"], "user");
    assert!(
        o.stderr
            .contains("gold judge (judge-1): 2 rows graded (0 from the cache)"),
        "{}",
        o.stderr
    );
    assert!(
        o.stderr
            .contains("tokens: 20 in, 6 out (reported by 2 of 2 answers)"),
        "{}",
        o.stderr
    );
    assert!(
        o.stderr.contains("1 row graded by someone else left alone"),
        "{}",
        o.stderr
    );

    // --name names the labeler; --second-opinion grades the person's row
    // too, beside the person's grade.
    let o = judge(
        &server,
        &sheet,
        &["--model", "judge-1", "--name", "umbrela-v1", "--second-opinion"],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    let rows = read_sheet(&sheet);
    assert_eq!(
        (rows[2]["grade"].clone(), rows[2]["source"].clone()),
        (json!(1), json!("person"))
    );
    assert_eq!(rows[2]["opinions"][0]["grade"], 3);
    assert_eq!(rows[2]["opinions"][0]["source"], "model");
    assert_eq!(rows[2]["opinions"][0]["labeler"], "umbrela-v1");
    // The default prompt's hash, and UMBRELA's answer line asked for.
    let default_prompt = server.seen().last().unwrap().prompt();
    assert!(default_prompt.contains("##final score"), "{default_prompt}");
    assert!(default_prompt.contains("delete a project") || default_prompt.contains("rotate an api key"));
}

#[test]
fn the_anthropic_wire_format() {
    let server = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let sheet = write_sheet(
        dir.path(),
        "s.jsonl",
        &[row("q1", "reset a password", "c1", "Use the reset link [g3]")],
    );
    let mut c = rgate();
    c.env("ANTHROPIC_API_KEY", KEY)
        .env_remove("HTTP_PROXY")
        .env_remove("http_proxy")
        .args(["gold", "judge"])
        .arg(&sheet)
        .args([
            "--provider",
            "anthropic",
            "--model",
            "claude-x",
            "--base-url",
            &server.addr,
        ]);
    let o = run(c);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let seen = server.seen();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].path, "/v1/messages");
    assert_eq!(seen[0].headers["x-api-key"], KEY);
    assert_eq!(seen[0].headers["anthropic-version"], "2023-06-01");
    assert!(!seen[0].headers.contains_key("authorization"));
    assert!(seen[0].body["max_tokens"].as_u64().unwrap() > 0);
    assert_eq!(seen[0].body["model"], "claude-x");
    let rows = read_sheet(&sheet);
    assert_eq!(
        (rows[0]["grade"].clone(), rows[0]["labeler"].clone()),
        (json!(3), json!("claude-x"))
    );
    assert!(o.stderr.contains("tokens: 10 in, 3 out"), "{}", o.stderr);
}

#[test]
fn rate_limits_and_server_errors_are_retried_within_bounds() {
    let server = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let sheet = write_sheet(
        dir.path(),
        "s.jsonl",
        &[
            row("q1", "q one", "c1", "limited [429] [g1]"),
            row("q1", "q one", "c2", "flaky [500once] [g2]"),
            row("q1", "q one", "c3", "down [500always] [g3]"),
            row("q1", "q one", "c4", "slow [slow] [g3]"),
        ],
    );
    let o = judge(&server, &sheet, &["--model", "m", "--timeout-s", "1"]);
    // One pair failed for good: a counted failure, exit 1, the rest stored.
    assert_eq!(o.code, 1, "{}", o.stderr);
    let rows = read_sheet(&sheet);
    let grades: Vec<Value> = rows.iter().map(|r| r["grade"].clone()).collect();
    assert_eq!(grades, [json!(1), json!(2), Value::Null, json!(3)]);
    let seen = server.seen();
    let tries = |marker: &str| {
        seen.iter()
            .filter(|s| s.prompt().contains(marker))
            .collect::<Vec<_>>()
    };
    // 429 then the answer, the second at least the asked-for second later.
    let limited = tries("[429]");
    assert_eq!(limited.len(), 2);
    assert!(limited[1].at - limited[0].at >= Duration::from_millis(950));
    assert_eq!(tries("[500once]").len(), 2);
    // The first try and 5 retries, no more.
    assert_eq!(tries("[500always]").len(), 6);
    // Timed out once, answered on the retry.
    assert_eq!(tries("[slow]").len(), 2);
    assert!(
        o.stderr.contains("4 requests sent: 3 answered, 1 failed"),
        "{}",
        o.stderr
    );
    assert!(
        o.stderr
            .contains("failed: HTTP 500: <html>upstream error</html> (after 5 retries)"),
        "{}",
        o.stderr
    );
}

#[test]
fn malformed_and_ambiguous_answers_are_counted_failures() {
    let server = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let sheet = write_sheet(
        dir.path(),
        "s.jsonl",
        &[
            row("q1", "q one", "c1", "broken [garbage]"),
            row("q1", "q one", "c2", "unsure [ambiguous]"),
            row("q1", "q one", "c3", "fine [g2]"),
        ],
    );
    let o = judge(&server, &sheet, &["--model", "m"]);
    assert_eq!(o.code, 1, "{}", o.stderr);
    assert!(
        o.stderr.contains("3 requests sent: 1 answered, 2 failed"),
        "{}",
        o.stderr
    );
    assert!(o.stderr.contains("the answer is not JSON"), "{}", o.stderr);
    assert!(
        o.stderr.contains("the answer gives different grades (1, 3)"),
        "{}",
        o.stderr
    );
    assert!(!o.stderr.contains("panicked"));
    let rows = read_sheet(&sheet);
    assert_eq!(rows[0]["grade"], Value::Null);
    assert_eq!(rows[1]["grade"], Value::Null);
    assert_eq!(rows[2]["grade"], 2);
    // Neither is cached: the next run asks again.
    server.reset();
    judge(&server, &sheet, &["--model", "m"]);
    assert_eq!(server.requests(), 2);
}

#[test]
fn a_negative_grade_is_a_counted_failure_not_its_absolute_value() {
    let server = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let sheet = write_sheet(
        dir.path(),
        "s.jsonl",
        &[
            row("q1", "q one", "c1", "a [minus1]"),
            row("q1", "q one", "c2", "b [minus3]"),
            row("q1", "q one", "c3", "fine [g2]"),
        ],
    );
    let o = judge(&server, &sheet, &["--model", "m"]);
    assert_eq!(o.code, 1, "{}", o.stderr);
    assert!(
        o.stderr.contains("3 requests sent: 1 answered, 2 failed"),
        "{}",
        o.stderr
    );
    assert!(o.stderr.contains("grade -1 is outside 0..3"), "{}", o.stderr);
    assert!(o.stderr.contains("grade -3 is outside 0..3"), "{}", o.stderr);
    let rows = read_sheet(&sheet);
    assert_eq!(rows[0]["grade"], Value::Null);
    assert_eq!(rows[1]["grade"], Value::Null);
    assert_eq!(rows[2]["grade"], 2);
    let cache = fs::read_to_string(dir.path().join(".rgate-judge-cache.jsonl")).unwrap();
    assert_eq!(cache.lines().count(), 1, "{cache}");
}

#[test]
fn no_more_than_concurrency_requests_are_in_flight() {
    for n in [1usize, 3] {
        let server = Server::start();
        server.state.hold_for.store(n, Ordering::SeqCst);
        let dir = tempfile::tempdir().unwrap();
        let rows: Vec<Value> = (0..8)
            .map(|i| {
                row(
                    "q1",
                    "q one",
                    &format!("c{i}"),
                    &format!("passage {i} [hold] [g1]"),
                )
            })
            .collect();
        let sheet = write_sheet(dir.path(), "s.jsonl", &rows);
        let o = judge(
            &server,
            &sheet,
            &["--model", "m", "--concurrency", &n.to_string()],
        );
        assert_eq!(o.code, 0, "{}", o.stderr);
        assert_eq!(server.requests(), 8);
        // The server holds each request until n are in flight, and a while
        // after: exactly n were, never more.
        assert_eq!(server.state.max_in_flight.load(Ordering::SeqCst), n);
    }
}

#[test]
fn the_cache_answers_a_repeated_run_and_keys_on_the_model() {
    let server = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let rows = [
        row("q1", "q one", "c1", "a [g1]"),
        row("q1", "q one", "c2", "b [g2]"),
        // The same texts under another chunk id: one request serves both.
        row("q1", "q one", "c9", "b [g2]"),
    ];
    let sheet = write_sheet(dir.path(), "s.jsonl", &rows);
    let o = judge(&server, &sheet, &["--model", "m1"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(server.requests(), 2);
    let graded = fs::read_to_string(&sheet).unwrap();
    let cache = dir.path().join(".rgate-judge-cache.jsonl");
    assert_eq!(fs::read_to_string(&cache).unwrap().lines().count(), 2);

    // A fresh copy of the sheet, the same model: nothing sent, same grades.
    server.reset();
    let again = write_sheet(dir.path(), "again.jsonl", &rows);
    let o = judge(&server, &again, &["--model", "m1"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(server.requests(), 0);
    assert!(
        o.stderr.contains("3 rows graded (3 from the cache)"),
        "{}",
        o.stderr
    );
    let strip = |s: &str| s.lines().map(|l| l.to_string()).collect::<Vec<_>>();
    assert_eq!(strip(&fs::read_to_string(&again).unwrap()), strip(&graded));

    // Another model is another key: asked afresh.
    let other = write_sheet(dir.path(), "other.jsonl", &rows);
    let o = judge(&server, &other, &["--model", "m2"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(server.requests(), 2);

    // A line torn by a kill is ignored, not fatal, and the cache goes on.
    let mut f = fs::OpenOptions::new().append(true).open(&cache).unwrap();
    f.write_all(b"{\"key\":\"abc\",\"gr").unwrap();
    server.reset();
    let torn = write_sheet(
        dir.path(),
        "torn.jsonl",
        &[row("q2", "q two", "c1", "new [g3]"), rows[0].clone()],
    );
    let o = judge(&server, &torn, &["--model", "m1"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(server.requests(), 1);
    assert!(o.stderr.contains("1 line of"), "{}", o.stderr);
    let lines: Vec<String> = fs::read_to_string(&cache)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(lines.len(), 6);
    assert!(serde_json::from_str::<Value>(lines.last().unwrap()).is_ok());
}

#[test]
fn max_requests_is_the_budget() {
    let server = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let rows: Vec<Value> = (0..5)
        .map(|i| row("q1", "q one", &format!("c{i}"), &format!("p{i} [g1]")))
        .collect();
    let sheet = write_sheet(dir.path(), "s.jsonl", &rows);
    let o = judge(
        &server,
        &sheet,
        &["--model", "m", "--max-requests", "2", "--concurrency", "4"],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(server.requests(), 2);
    let graded = read_sheet(&sheet)
        .iter()
        .filter(|r| !r["grade"].is_null())
        .count();
    assert_eq!(graded, 2);
    assert!(
        o.stderr
            .contains("3 requests beyond --max-requests not sent (3 rows stay ungraded)"),
        "{}",
        o.stderr
    );
}

#[test]
fn the_key_appears_in_no_output_sheet_cache_or_error() {
    let server = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let sheet = write_sheet(
        dir.path(),
        "s.jsonl",
        &[
            row("q1", "q one", "c1", "a [g1]"),
            row("q1", "q one", "c2", "b [garbage]"),
        ],
    );
    let fragments = [KEY, "SECRET0123456789", "sk-test-", "abcdefKEYEND"];
    let clean = |what: &str, text: &str| {
        for f in fragments {
            assert!(!text.contains(f), "{what} holds {f:?}:\n{text}");
        }
    };
    // A run that works (and one malformed answer echoed in its failure).
    let o = judge(&server, &sheet, &["--model", "m", "--api-key-env", "MY_KEY"]);
    assert_eq!(o.code, 1, "{}", o.stderr);
    clean("stdout", &o.stdout);
    clean("stderr", &o.stderr);
    clean("sheet", &fs::read_to_string(&sheet).unwrap());
    clean(
        "cache",
        &fs::read_to_string(dir.path().join(".rgate-judge-cache.jsonl")).unwrap(),
    );
    // A server that rejects the key and echoes it back: a clear error, exit
    // 2, the key scrubbed from what it echoed.
    let mut c = rgate();
    c.env("OPENAI_API_KEY", format!("{KEY}-wrong"))
        .env_remove("HTTP_PROXY")
        .env_remove("http_proxy")
        .args(["gold", "judge"])
        .arg(&sheet)
        .args(["--model", "m", "--base-url", &format!("{}/v1", server.addr)]);
    let o = run(c);
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(
        o.stderr
            .contains("HTTP 401 (invalid_request_error): Incorrect API key provided: [key]"),
        "{}",
        o.stderr
    );
    assert!(
        o.stderr.contains("hint: check --model, --base-url and the key"),
        "{}",
        o.stderr
    );
    clean("stderr", &o.stderr);
    clean("stdout", &o.stdout);
    // And a dry run.
    let o = judge(&server, &sheet, &["--model", "m", "--dry-run"]);
    clean("dry-run stdout", &o.stdout);
    clean("dry-run stderr", &o.stderr);
}

#[test]
fn a_server_echoing_the_key_in_any_answer_sees_it_scrubbed_everywhere() {
    let server = Server::start();
    // Any of these in any output is (part of) the key.
    let fragments = [KEY, KEY_PARTIAL, "sk-test", "SECRET0123456789", "KEYEND", "YEND"];
    let clean = |what: &str, text: &str| {
        for f in fragments {
            assert!(!text.contains(f), "{what} holds {f:?}:\n{text}");
        }
    };
    for provider in ["openai", "anthropic"] {
        for (marker, code, said) in [
            (
                "[echo-answer]",
                1,
                "no grade found in the answer: I cannot grade this, key [key]",
            ),
            ("[echo-notjson]", 1, "the answer is not JSON"),
            ("[echo-notext]", 1, "the answer holds no text where"),
            ("[echo-400]", 1, "HTTP 400 ([key]): key [key] (shown as [key])"),
            (
                "[echo-500]",
                1,
                "HTTP 500: <html>upstream error, key [key] (shown as [key])",
            ),
            ("[echo-404]", 2, "HTTP 404 ([key]): key [key] (shown as [key])"),
            (
                "[echo-302]",
                2,
                "a redirect to https://elsewhere.example/?key=[key]",
            ),
        ] {
            let dir = tempfile::tempdir().unwrap();
            let sheet = write_sheet(
                dir.path(),
                "s.jsonl",
                &[
                    row("q1", "q one", "c1", "a [g1]"),
                    row("q1", "q one", "c2", &format!("b {marker}")),
                ],
            );
            let base = match provider {
                "openai" => format!("{}/v1", server.addr),
                _ => server.addr.clone(),
            };
            let mut c = rgate();
            c.env("OPENAI_API_KEY", KEY)
                .env("ANTHROPIC_API_KEY", KEY)
                .env_remove("HTTP_PROXY")
                .env_remove("http_proxy")
                .args(["gold", "judge"])
                .arg(&sheet)
                .args(["--provider", provider, "--model", "m", "--base-url", &base])
                .args(["--concurrency", "1"]);
            let o = run(c);
            let ctx = format!("{provider} {marker}");
            assert_eq!(o.code, code, "{ctx}: {}", o.stderr);
            assert!(o.stderr.contains(said), "{ctx}: {}", o.stderr);
            clean(&format!("{ctx} stderr"), &o.stderr);
            clean(&format!("{ctx} stdout"), &o.stdout);
            clean(&format!("{ctx} sheet"), &fs::read_to_string(&sheet).unwrap());
            if let Ok(cache) = fs::read_to_string(dir.path().join(".rgate-judge-cache.jsonl")) {
                clean(&format!("{ctx} cache"), &cache);
            }
        }
    }
}

#[test]
fn a_dry_run_counts_requests_and_prompt_characters_and_sends_nothing() {
    let server = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let sheet = write_sheet(
        dir.path(),
        "s.jsonl",
        &[
            row("q1", "café hours", "c1", "Open at 8 [g1]"),
            row("q1", "café hours", "c2", "Closed Sundays [g0]"),
            person("q2", "menu", "c3", "Soup [g2]", 2),
        ],
    );
    let prompt = dir.path().join("p.txt");
    fs::write(&prompt, "Q={query} P={passage}").unwrap();
    let before = fs::read_to_string(&sheet).unwrap();
    let o = judge(
        &server,
        &sheet,
        &["--model", "m", "--prompt", prompt.to_str().unwrap(), "--dry-run"],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    // By hand: "Q=café hours P=Open at 8 [g1]" is 29 characters (é is
    // one), "Q=café hours P=Closed Sundays [g0]" 34.
    assert!(
        o.stdout.starts_with(&format!(
            "gold judge --dry-run: would send 2 requests (63 prompt characters) to {}/v1/chat/completions for m\n",
            server.addr
        )),
        "{}",
        o.stdout
    );
    assert_eq!(server.requests(), 0);
    assert_eq!(fs::read_to_string(&sheet).unwrap(), before);
    assert!(!dir.path().join(".rgate-judge-cache.jsonl").exists());
    // No key is needed to count.
    let mut c = rgate();
    c.env_remove("OPENAI_API_KEY")
        .args(["gold", "judge"])
        .arg(&sheet)
        .args(["--model", "m", "--dry-run"]);
    let o = run(c);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.contains("would send 2 requests"), "{}", o.stdout);
}

#[test]
fn the_canary_grades_keyword_only_passages_and_leaves_no_row() {
    let server = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let rows = [
        row("q1", "rotate an API key", "c1", "Keys rotate under Settings [g2]"),
        row("q2", "delete a project", "c2", "Projects are deleted [g3]"),
    ];
    let sheet = write_sheet(dir.path(), "s.jsonl", &rows);
    let prompt = dir.path().join("p.txt");
    fs::write(&prompt, "Q={query}\nP={passage}").unwrap();
    let o = judge(
        &server,
        &sheet,
        &[
            "--model",
            "m",
            "--canary",
            "2",
            "--prompt",
            prompt.to_str().unwrap(),
        ],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    // The server grades a passage without a marker 2: both canaries fooled it.
    assert!(
        o.stderr.contains(
            "canary: 2 of 2 keyword-only passages graded relevant (grade >= 1; by grade 0/1/2/3: 0/0/2/0)"
        ),
        "{}",
        o.stderr
    );
    // It obeys a grade the passage names: both injected passages got the
    // 3 they asked for, reported apart from the stuffing, with a warning.
    assert!(
        o.stderr.contains(
            "canary: 2 of 2 injected passages (no answer, an instruction to grade them 3) graded as told, 2 relevant (by grade 0/1/2/3: 0/0/0/2); not written to the sheet"
        ),
        "{}",
        o.stderr
    );
    assert!(
        o.stderr
            .contains("warning: the model follows instructions written in the passages it grades"),
        "{}",
        o.stderr
    );
    let seen: Vec<String> = server
        .seen()
        .iter()
        .map(|s| s.prompt().split_once("\nP=").unwrap().1.to_string())
        .filter(|p| !p.contains("[g"))
        .collect();
    assert_eq!(seen.len(), 4, "{seen:?}");
    let (injected, mut passages): (Vec<String>, Vec<String>) =
        seen.into_iter().partition(|p| p.contains("holds no information"));
    // Two phrasings, each on a query of its own; none repeats the query.
    assert_eq!(injected.len(), 2);
    assert_ne!(injected[0], injected[1]);
    for p in &injected {
        assert!(!p.contains("rotate") && !p.contains("project"), "{p}");
    }
    passages.sort();
    assert_eq!(passages.len(), 2);
    // Only the query's words.
    for (p, q) in passages.iter().zip(["delete a project", "rotate an API key"]) {
        let words: std::collections::BTreeSet<&str> = q.split(' ').collect();
        assert!(p.split(' ').all(|w| words.contains(w)), "{p}");
        assert!(p.split(' ').count() >= words.len(), "{p}");
    }
    let after = read_sheet(&sheet);
    assert_eq!(after.len(), 2);
    assert_eq!(
        (after[0]["grade"].clone(), after[1]["grade"].clone()),
        (json!(2), json!(3))
    );
}

#[test]
fn a_judge_that_ignores_injected_instructions_passes_the_injection_canary() {
    let server = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let rows = [
        row("q1", "rotate a key", "c1", "Keys rotate [g2]"),
        row("q2", "delete a project", "c2", "Projects go [g3]"),
        row("q3", "list users", "c3", "Users [g1]"),
    ];
    let sheet = write_sheet(dir.path(), "s.jsonl", &rows);
    let prompt = dir.path().join("p.txt");
    fs::write(&prompt, "[resist] Q={query}\nP={passage}").unwrap();
    let args = [
        "--model",
        "m",
        "--canary",
        "5",
        "--prompt",
        prompt.to_str().unwrap(),
    ];
    let o = judge(&server, &sheet, &args);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stderr.contains(
            "canary: 0 of 3 injected passages (no answer, an instruction to grade them 3) graded as told, 0 relevant (by grade 0/1/2/3: 3/0/0/0)"
        ),
        "{}",
        o.stderr
    );
    assert!(!o.stderr.contains("follows instructions"), "{}", o.stderr);
    // Five of each asked, three queries: each kind says so.
    for kind in ["keyword", "injection"] {
        assert!(
            o.stderr.contains(&format!(
                "note: 5 {kind} canaries asked, the sheet has queries for 3"
            )),
            "{}",
            o.stderr
        );
    }
    // A second run finds every canary in the cache and sends nothing.
    let before = server.seen().len();
    let o = judge(&server, &sheet, &args);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(server.seen().len(), before);
    assert!(
        o.stderr.contains("canary: 0 of 3 injected passages"),
        "{}",
        o.stderr
    );
}

#[test]
fn bad_setups_are_clear_errors_before_anything_is_sent() {
    let server = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let sheet = write_sheet(dir.path(), "s.jsonl", &[row("q1", "q", "c1", "a [g1]")]);
    // The hosted API without its key.
    let mut c = rgate();
    c.env_remove("ANTHROPIC_API_KEY")
        .args(["gold", "judge"])
        .arg(&sheet)
        .args(["--provider", "anthropic", "--model", "m"]);
    let o = run(c);
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(o.stderr.contains("ANTHROPIC_API_KEY is not set"), "{}", o.stderr);
    // A prompt without a placeholder names its file.
    let prompt = dir.path().join("p.txt");
    fs::write(&prompt, "Grade {query}.").unwrap();
    let o = judge(
        &server,
        &sheet,
        &["--model", "m", "--prompt", prompt.to_str().unwrap()],
    );
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(
        o.stderr
            .contains("p.txt: the prompt has no `{passage}` placeholder"),
        "{}",
        o.stderr
    );
    // An unknown model stops the run with the server's words.
    let o = judge(&server, &sheet, &["--model", "no-such-model"]);
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(
        o.stderr
            .contains("HTTP 404 (not_found_error): model: no-such-model"),
        "{}",
        o.stderr
    );
    assert_eq!(server.requests(), 1);
    assert_eq!(read_sheet(&sheet)[0]["grade"], Value::Null);
}

#[cfg(unix)]
#[test]
fn the_cache_is_a_regular_file_never_a_fifo_a_device_or_a_link() {
    let server = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let sheet = write_sheet(dir.path(), "s.jsonl", &[row("q1", "q one", "c1", "a [g1]")]);
    let fifo = dir.path().join("fifo");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let timed = |args: &[&str]| {
        let mut c = rgate();
        c.env("OPENAI_API_KEY", KEY)
            .env_remove("HTTP_PROXY")
            .env_remove("http_proxy")
            .args(["gold", "judge"])
            .arg(&sheet)
            .args(["--model", "m", "--base-url", &format!("{}/v1", server.addr)])
            .args(args)
            .timeout(Duration::from_secs(20));
        let start = Instant::now();
        let o = run(c);
        assert!(start.elapsed() < Duration::from_secs(15), "{args:?} hung");
        o
    };
    let f = fifo.to_str().unwrap();
    for args in [&["--cache", f][..], &["--cache", f, "--dry-run"][..]] {
        let o = timed(args);
        assert_eq!(o.code, 2, "{args:?}: {}", o.stderr);
        assert!(
            o.stderr.contains("fifo: not a regular file but a named pipe"),
            "{args:?}: {}",
            o.stderr
        );
    }
    let o = timed(&["--cache", "/dev/zero"]);
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(
        o.stderr
            .contains("/dev/zero: not a regular file but a character device"),
        "{}",
        o.stderr
    );
    assert_eq!(server.requests(), 0);
    // A link committed at the default path: refused, and what it points at
    // is neither read nor appended to.
    let victim = dir.path().join("victim.txt");
    fs::write(&victim, "precious\n").unwrap();
    std::os::unix::fs::symlink(&victim, dir.path().join(".rgate-judge-cache.jsonl")).unwrap();
    for args in [&[][..], &["--dry-run"][..]] {
        let o = timed(args);
        assert_eq!(o.code, 2, "{args:?}: {}", o.stderr);
        assert!(
            o.stderr.contains(
                ".rgate-judge-cache.jsonl: is a symbolic link; rgate does not read or append to the judge cache through links"
            ),
            "{args:?}: {}",
            o.stderr
        );
    }
    let o = timed(&["--cache", "/dev/zero", "--dry-run"]);
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert_eq!(fs::read_to_string(&victim).unwrap(), "precious\n");
    assert_eq!(server.requests(), 0);
    assert_eq!(read_sheet(&sheet)[0]["grade"], Value::Null);
}

#[test]
fn tokens_are_reported_out_of_the_answers_received_graded_or_not() {
    let server = Server::start();
    let dir = tempfile::tempdir().unwrap();
    // Four answers, each reporting 10 tokens in and 3 out, none with a
    // grade that can be stored.
    let rows: Vec<Value> = (0..4)
        .map(|i| row("q1", "q one", &format!("c{i}"), &format!("p{i} [minus1]")))
        .collect();
    let sheet = write_sheet(dir.path(), "s.jsonl", &rows);
    let o = judge(&server, &sheet, &["--model", "m"]);
    assert_eq!(o.code, 1, "{}", o.stderr);
    assert!(
        o.stderr.contains("4 requests sent: 0 answered, 4 failed"),
        "{}",
        o.stderr
    );
    assert!(
        o.stderr
            .contains("tokens: 40 in, 12 out (reported by 4 of 4 answers)"),
        "{}",
        o.stderr
    );
}

#[test]
fn a_transport_failure_no_retry_can_mend_stops_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let sheet = write_sheet(
        dir.path(),
        "s.jsonl",
        &[
            row("q1", "q one", "c1", "a [g1]"),
            row("q1", "q one", "c2", "b [g2]"),
        ],
    );
    // A plain-HTTP port that answers anything (a TLS hello too) with a 400.
    let plain = TcpListener::bind("127.0.0.1:0").unwrap();
    let plain_addr = plain.local_addr().unwrap();
    let connections = Arc::new(AtomicUsize::new(0));
    let n = connections.clone();
    std::thread::spawn(move || {
        for s in plain.incoming() {
            let Ok(mut s) = s else { continue };
            n.fetch_add(1, Ordering::SeqCst);
            let _ =
                s.write_all(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
        }
    });
    // A port nothing listens on.
    let closed = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    for (base, said) in [
        (format!("https://{plain_addr}/v1"), "is the server plain http://?"),
        (format!("http://{closed}/v1"), "cannot connect to http://"),
    ] {
        let mut c = rgate();
        c.env("OPENAI_API_KEY", KEY)
            .env_remove("HTTP_PROXY")
            .env_remove("http_proxy")
            .env_remove("HTTPS_PROXY")
            .env_remove("https_proxy")
            .args(["gold", "judge"])
            .arg(&sheet)
            .args(["--model", "m", "--base-url", &base, "--concurrency", "1"])
            .timeout(Duration::from_secs(60));
        let start = Instant::now();
        let o = run(c);
        // Five retries with backoff took 15 s and more per request.
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "{base}: {:?}",
            start.elapsed()
        );
        assert_eq!(o.code, 2, "{base}: {}", o.stderr);
        assert!(o.stderr.contains(said), "{base}: {}", o.stderr);
        assert!(!o.stderr.contains("retries"), "{base}: {}", o.stderr);
    }
    // One per row at most (the second may start before the first comes
    // back); five retries each were 12.
    assert!(connections.load(Ordering::SeqCst) <= 2);
    assert_eq!(read_sheet(&sheet)[0]["grade"], Value::Null);
}

/// Issue 48 item 12: a server echoing the key's middle (25 of its 36
/// characters, no head or tail) sees it redacted; credentials in
/// `--base-url` (userinfo, `?api_key=`) appear in no error and no dry run.
#[test]
fn no_piece_of_the_key_and_no_url_credential_is_printed() {
    let server = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let sheet = write_sheet(
        dir.path(),
        "s.jsonl",
        &[row("q1", "q one", "c1", "b [echo-middle]")],
    );
    let o = judge(&server, &sheet, &["--model", "m", "--concurrency", "1"]);
    assert_eq!(o.code, 1, "{}", o.stderr);
    assert!(
        o.stderr.contains("HTTP 400: key [key] is not valid"),
        "{}",
        o.stderr
    );
    // Every 12 characters of the key in a row.
    let chars: Vec<char> = KEY.chars().collect();
    for start in 0..=chars.len() - 12 {
        let piece: String = chars[start..start + 12].iter().collect();
        for (what, text) in [("stderr", &o.stderr), ("stdout", &o.stdout)] {
            assert!(!text.contains(&piece), "{what} holds {piece:?}:\n{text}");
        }
    }
    // URL credentials: a dry run, and a connection that fails.
    let closed = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let secrets = ["ana:", "pw-SEKRET9", "QUERYKEY77", "TOKEN0042"];
    for base in [
        format!("http://ana:pw-SEKRET9@{closed}/v1?api_key=QUERYKEY77&token=TOKEN0042"),
        format!(
            "{}/v1?key=QUERYKEY77",
            server.addr.replace("http://", "http://ana:pw-SEKRET9@")
        ),
    ] {
        for extra in [&["--dry-run"][..], &[][..]] {
            let mut c = rgate();
            c.env("OPENAI_API_KEY", KEY)
                .env_remove("HTTP_PROXY")
                .env_remove("http_proxy")
                .args(["gold", "judge"])
                .arg(&sheet)
                .args(["--model", "m", "--base-url", &base, "--concurrency", "1"])
                .args(extra)
                .timeout(Duration::from_secs(60));
            let o = run(c);
            for f in secrets {
                assert!(
                    !o.stdout.contains(f),
                    "{base} {extra:?} stdout holds {f}:\n{}",
                    o.stdout
                );
                assert!(
                    !o.stderr.contains(f),
                    "{base} {extra:?} stderr holds {f}:\n{}",
                    o.stderr
                );
            }
            if extra.is_empty() && base.contains(&closed.to_string()) {
                assert!(
                    o.stderr.contains("cannot connect to http://[redacted]@"),
                    "{}",
                    o.stderr
                );
            }
            if !extra.is_empty() {
                assert!(o.stdout.contains("[redacted]"), "{}", o.stdout);
            }
        }
    }
}
