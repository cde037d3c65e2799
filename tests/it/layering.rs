//! The module map in `src/lib.rs`, checked against the code: the layer
//! table there names every module and only modules, no module imports one
//! of a layer above its own, the library knows no CLI, renderers import
//! neither the CLI nor the commands, and no import circle runs among the
//! top-level modules. Read from the source text (what `use`, `crate::` and
//! `super::` paths a file names outside its tests and comments), so a new
//! wrong-way import fails here rather than in review.

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

/// The paths a `use` tree names, its groups expanded: `a::{b, c::{d}}`
/// gives `a::b` and `a::c::d`.
fn expand(tree: &str, out: &mut Vec<String>) {
    let tree = tree.trim();
    let Some(open) = tree.find('{') else {
        let path: String = tree
            .chars()
            .take_while(|&c| is_ident(c) || c == ':' || c == '*')
            .collect();
        out.push(path);
        return;
    };
    let prefix = &tree[..open];
    let mut depth = 0;
    let mut item = String::new();
    let mut items = Vec::new();
    for c in tree[open + 1..].chars() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => break,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(std::mem::take(&mut item));
                continue;
            }
            _ => {}
        }
        item.push(c);
    }
    items.push(item);
    for i in items.iter().filter(|i| !i.trim().is_empty()) {
        expand(&format!("{prefix}{}", i.trim()), out);
    }
}

/// Modules named by `crate::a` or `crate::a::b` paths (and `super::x`,
/// `super::super::x`), resolved to the longest known module; `use
/// crate::{a, b::{c}}` groups count too. `module` is the file's module
/// (`a::b` for `src/a/b.rs`, `a` for `src/a/mod.rs`).
fn imports(module: &str, code: &str, known: &BTreeSet<String>) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let resolve = |path: &str, out: &mut BTreeSet<String>| {
        let segs: Vec<&str> = path.split("::").filter(|s| !s.is_empty() && *s != "*").collect();
        for n in (1..=segs.len().min(2)).rev() {
            let m = segs[..n].join("::");
            if known.contains(&m) {
                out.insert(m);
                return;
            }
        }
    };
    let at_path_start =
        |i: usize| i == 0 || !is_ident(code[..i].chars().last().unwrap()) && !code[..i].ends_with("::");
    for (i, _) in code.match_indices("crate::") {
        if !at_path_start(i) {
            continue;
        }
        let mut paths = Vec::new();
        expand(&code[i + "crate::".len()..], &mut paths);
        for p in paths {
            resolve(&p, &mut out);
        }
    }
    let here: Vec<&str> = module.split("::").collect();
    for (i, _) in code.match_indices("super::") {
        if !at_path_start(i) {
            continue;
        }
        // Each `super` climbs one module from the file's own.
        let mut rest = &code[i..];
        let mut up = 0;
        while let Some(r) = rest.strip_prefix("super::") {
            up += 1;
            rest = r;
        }
        let Some(base) = here.len().checked_sub(up) else {
            continue;
        };
        let mut paths = Vec::new();
        expand(rest, &mut paths);
        for p in paths {
            let full = here[..base]
                .iter()
                .copied()
                .chain(p.split("::"))
                .collect::<Vec<_>>();
            resolve(&full.join("::"), &mut out);
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

/// `a::b` -> `a`.
fn top(module: &str) -> &str {
    module.split("::").next().unwrap()
}

#[test]
fn no_import_circles_among_source_files() {
    let t = tree();
    // Among top-level modules: a submodule's imports are its parent's, and
    // a parent and its own submodules (`gate` and `gate::pair`) import each
    // other freely.
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (m, deps) in &t.edges {
        let entry = edges.entry(top(m).to_string()).or_default();
        entry.extend(deps.iter().map(|d| top(d).to_string()).filter(|d| d != top(m)));
    }
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
    for m in edges.keys() {
        if !state.contains_key(m) {
            let mut stack = Vec::new();
            if let Some(circle) = visit(m, &edges, &mut state, &mut stack) {
                panic!("import circle: {}", circle.join(" -> "));
            }
        }
    }
}

/// The layer table of `src/lib.rs`'s doc comment: the layers top to
/// bottom, each with its modules (`main.rs` as `main`), and the modules
/// that "serve every layer".
#[derive(Debug, PartialEq)]
struct Layers {
    rows: Vec<(String, Vec<String>)>,
    shared: Vec<String>,
}

/// The names in backticks in `text`: `` [`cli`] `` and `` `main.rs` ``
/// give `cli` and `main`.
fn ticked(text: &str) -> Vec<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .map(|n| n.strip_suffix(".rs").unwrap_or(n).to_string())
        .collect()
}

fn layers(lib_rs: &str) -> Layers {
    let doc: Vec<&str> = lib_rs
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("//!"))
        .map(|l| l.strip_prefix(' ').unwrap_or(l))
        .collect();
    // Rows of the first table: after its header and `|---|` lines.
    let rows = doc
        .iter()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .skip(2)
        .map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            (cells[1].to_string(), ticked(cells[2]))
        })
        .collect();
    // "(and [`diag`], [`escape`] and [`fsutil`] serve every layer)".
    let prose = doc.join(" ");
    let end = prose
        .find("serve every layer")
        .expect("lib.rs says which modules serve every layer");
    let start = prose[..end]
        .rfind('(')
        .expect("the list of modules serving every layer is in parentheses");
    Layers {
        rows,
        shared: ticked(&prose[start..end]),
    }
}

fn lib_layers() -> Layers {
    layers(&fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs")).unwrap())
}

/// The top-level modules of `src/` (`main` for the binary's root; not the
/// library's root `lib`).
fn top_modules(t: &Tree) -> BTreeSet<String> {
    t.code
        .keys()
        .map(|m| top(m).to_string())
        .filter(|m| m != "lib")
        .collect()
}

#[test]
fn the_layer_table_names_every_module_and_only_modules() {
    let t = tree();
    let l = lib_layers();
    assert!(l.rows.len() >= 2 && !l.shared.is_empty(), "{l:?}");
    let mut listed: Vec<&String> = l.rows.iter().flat_map(|(_, ms)| ms).chain(&l.shared).collect();
    let modules = top_modules(&t);
    let mut wrong = Vec::new();
    for m in &modules {
        if !listed.contains(&m) {
            wrong.push(format!("module `{m}` is in no layer of src/lib.rs's table"));
        }
    }
    for m in &listed {
        if !modules.contains(*m) {
            wrong.push(format!(
                "src/lib.rs's table names `{m}`, which is no module of src/"
            ));
        }
    }
    listed.sort();
    for w in listed.windows(2).filter(|w| w[0] == w[1]) {
        wrong.push(format!("src/lib.rs's table names `{}` twice", w[0]));
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// Imports that run upwards today, each to be removed by the change named.
/// Empty: every import runs downwards. A new entry needs the change that
/// removes it named beside it.
const KNOWN_UPWARD: &[(&str, &str)] = &[];

#[test]
fn no_module_imports_a_layer_above_its_own() {
    let t = tree();
    let l = lib_layers();
    // Top is 0; the modules serving every layer sit below the bottom one,
    // so they may import only each other.
    let rank = |m: &str| -> Option<usize> {
        if l.shared.iter().any(|s| s == m) {
            return Some(l.rows.len());
        }
        l.rows.iter().position(|(_, ms)| ms.iter().any(|x| x == m))
    };
    let name = |r: usize| {
        l.rows
            .get(r)
            .map_or("serve every layer", |(n, _)| n.as_str())
            .to_string()
    };
    let mut wrong = Vec::new();
    let mut seen_known = BTreeSet::new();
    for (m, deps) in &t.edges {
        let (mt, Some(mr)) = (top(m), rank(top(m))) else {
            continue; // not in the table: the test above says so
        };
        for d in deps {
            let (dt, Some(dr)) = (top(d), rank(top(d))) else {
                continue;
            };
            if mt == dt || dr >= mr {
                continue;
            }
            if KNOWN_UPWARD.contains(&(mt, dt)) {
                seen_known.insert((mt, dt));
                continue;
            }
            wrong.push(format!(
                "{m} ({}) imports {d} ({}), a layer above",
                name(mr),
                name(dr)
            ));
        }
    }
    for k in KNOWN_UPWARD {
        if !seen_known.contains(k) {
            wrong.push(format!(
                "{} no longer imports {}: drop it from KNOWN_UPWARD",
                k.0, k.1
            ));
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[test]
fn the_layer_check_reads_the_table_and_nested_imports() {
    // The checks above are only as good as their parsers: the table's rows
    // in order, `main.rs` as `main`, the list serving every layer; nested
    // `use` groups, and `super::` from a `mod.rs` reaching the crate root.
    let doc = "//! Layers (and [`diag`] and [`fsutil`] serve every\n//! layer):\n//!\n//! | layer | modules | role |\n//! |---|---|---|\n//! | command line | `main.rs`, [`cli`] | clap |\n//! | statistics | [`stats`] | pure |\n//!\n//! | other | [`not_a_layer`] | x |\npub mod cli;\n";
    let want = Layers {
        rows: vec![
            ("command line".into(), vec!["main".into(), "cli".into()]),
            ("statistics".into(), vec!["stats".into()]),
        ],
        shared: vec!["diag".into(), "fsutil".into()],
    };
    assert_eq!(layers(doc), want);
    let known: BTreeSet<String> = ["gate", "gate::pair", "config", "stats", "diag"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let code = "use crate::{gate::{pair::Pair, Check}, stats::{self, holm}};\nuse super::config::Rule;\nfn f() { super::super::diag::x(); }";
    let got = imports("a::b", code, &known);
    let want: BTreeSet<String> = ["gate::pair", "gate", "stats", "diag"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(got, want, "from a::b");
    let got = imports("gate", "use super::config::Rule;\nuse self::pair::Pair;", &known);
    let want: BTreeSet<String> = ["config"].iter().map(|s| s.to_string()).collect();
    assert_eq!(got, want, "from gate (src/gate/mod.rs)");
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

/// `scripts/mutants.sh` mutates files that exist: when `src/gate.rs` became
/// `src/gate/`, its area kept pointing at the old file and the code that
/// decides got no mutants, silently (issue 51, item 6).
#[test]
fn mutation_areas_name_existing_files() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let script = std::fs::read_to_string(root.join("scripts/mutants.sh")).unwrap();
    let mut areas = 0;
    for line in script.lines() {
        let line = line.trim();
        let Some((_, rest)) = line.split_once(") echo \"src/") else {
            continue;
        };
        let pattern = format!("src/{}", rest.split('"').next().unwrap());
        areas += 1;
        let matched = match pattern.strip_suffix("/*.rs") {
            Some(dir) => std::fs::read_dir(root.join(dir)).is_ok_and(|entries| {
                entries
                    .flatten()
                    .any(|e| e.path().extension().is_some_and(|x| x == "rs"))
            }),
            None => root.join(&pattern).is_file(),
        };
        assert!(
            matched,
            "scripts/mutants.sh names {pattern}, which matches no file"
        );
    }
    assert_eq!(areas, 6, "expected the six areas of scripts/mutants.sh");
}
