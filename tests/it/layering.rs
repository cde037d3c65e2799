//! The module map in `src/lib.rs`, checked against the code: the library
//! knows no CLI, renderers import neither the CLI nor the commands, and no
//! import circle runs among `src/` files. Read from the source text (what
//! `use` and `crate::` paths a file names outside its tests and comments),
//! so a new wrong-way import fails here rather than in review.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// `src/a/b.rs` -> `a::b`; `src/a/mod.rs` -> `a`.
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.last().map(String::as_str) == Some("mod") {
        parts.pop();
    }
    parts.join("::")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The code of a file without its `#[cfg(test)]` module and comments.
fn code(text: &str) -> String {
    let text = text.split("#[cfg(test)]").next().unwrap_or("");
    text.lines()
        .map(|l| match l.find("//") {
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Modules named by `crate::a` or `crate::a::b` paths (and `super::x` in a
/// submodule), resolved to the longest known module; `use crate::{a, b}`
/// groups count too.
fn imports(module: &str, code: &str, known: &BTreeSet<String>) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let resolve = |path: &str, out: &mut BTreeSet<String>| {
        let segs: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
        for n in (1..=segs.len().min(2)).rev() {
            let m = segs[..n].join("::");
            if known.contains(&m) {
                out.insert(m);
                return;
            }
        }
    };
    let take_path = |rest: &str| -> String {
        rest.chars()
            .take_while(|&c| is_ident(c) || c == ':')
            .collect::<String>()
    };
    for (i, _) in code.match_indices("crate::") {
        if i > 0 && is_ident(code[..i].chars().last().unwrap()) {
            continue;
        }
        let rest = &code[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let inner = &group[..group.find('}').unwrap_or(group.len())];
            for item in inner.split(',') {
                resolve(&take_path(item.trim()), &mut out);
            }
        } else {
            resolve(&take_path(rest), &mut out);
        }
    }
    if let Some((parent, _)) = module.rsplit_once("::") {
        for (i, _) in code.match_indices("super::") {
            let rest = &code[i + "super::".len()..];
            resolve(&format!("{parent}::{}", take_path(rest)), &mut out);
        }
    }
    out.remove(module);
    out
}

struct Tree {
    /// Module -> its code.
    code: BTreeMap<String, String>,
    edges: BTreeMap<String, BTreeSet<String>>,
}

fn tree() -> Tree {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let code: BTreeMap<String, String> = files
        .iter()
        .map(|f| (module_of(&src, f), self::code(&fs::read_to_string(f).unwrap())))
        .collect();
    let known: BTreeSet<String> = code.keys().cloned().collect();
    let edges = code
        .iter()
        .map(|(m, c)| (m.clone(), imports(m, c, &known)))
        .collect();
    Tree { code, edges }
}

fn is_cli_layer(module: &str) -> bool {
    module == "main" || module == "cli" || module == "commands" || module.starts_with("commands::")
}

#[test]
fn the_library_knows_no_cli() {
    let t = tree();
    let mut wrong = Vec::new();
    for (m, deps) in &t.edges {
        if is_cli_layer(m) {
            continue;
        }
        for d in deps {
            if is_cli_layer(d) {
                wrong.push(format!("{m} imports {d}"));
            }
        }
        if t.code[m].contains("clap::") || t.code[m].contains("use clap") {
            wrong.push(format!("{m} uses clap"));
        }
    }
    assert!(wrong.is_empty(), "wrong-way imports: {wrong:#?}");
}

#[test]
fn renderers_import_neither_cli_nor_commands() {
    let t = tree();
    let wrong: Vec<String> = t
        .edges
        .iter()
        .filter(|(m, _)| *m == "report" || m.starts_with("report::"))
        .flat_map(|(m, deps)| {
            deps.iter()
                .filter(|d| is_cli_layer(d))
                .map(move |d| format!("{m} imports {d}"))
        })
        .collect();
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[test]
fn no_import_circles_among_source_files() {
    let t = tree();
    // Depth-first search for a back edge; report the first circle found.
    fn visit(
        m: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        state.insert(m.to_string(), 1);
        stack.push(m.to_string());
        for d in edges.get(m).into_iter().flatten() {
            // A parent module declaring its children is not an import.
            if d.starts_with(&format!("{m}::")) {
                continue;
            }
            match state.get(d.as_str()).copied() {
                Some(1) => {
                    let at = stack.iter().position(|s| s == d).unwrap();
                    let mut circle = stack[at..].to_vec();
                    circle.push(d.clone());
                    return Some(circle);
                }
                Some(_) => {}
                None => {
                    if let Some(c) = visit(d, edges, state, stack) {
                        return Some(c);
                    }
                }
            }
        }
        stack.pop();
        state.insert(m.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for m in t.edges.keys() {
        if !state.contains_key(m) {
            let mut stack = Vec::new();
            if let Some(circle) = visit(m, &t.edges, &mut state, &mut stack) {
                panic!("import circle: {}", circle.join(" -> "));
            }
        }
    }
}

#[test]
fn the_checker_sees_imports() {
    // The checks above are only as good as the parser: it must see a plain
    // path, a grouped `use`, and `super::` in a submodule.
    let known: BTreeSet<String> = ["gate", "report", "report::table", "cli", "stats"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let code =
        "use crate::{cli::Format, stats};\nfn f() { crate::gate::evaluate(); }\nuse super::table::Table;";
    let got = imports("report::gate", code, &known);
    let want: BTreeSet<String> = ["cli", "stats", "gate", "report::table"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(got, want);
}
