//! The direction of dependencies: between crates the compiler enforces it (a crate cannot name
//! one it does not depend on); inside each crate this test does, by reading which top-level
//! modules every module names (`crate::x`, `super::x` from a top-level file) and requiring the
//! graph to have no cycle. The engine must also stay free of terminal, watching and
//! highlighting code.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The top-level module a file of `src` belongs to (`None` for `lib.rs` / `main.rs`).
fn module_of(src: &Path, file: &Path) -> Option<String> {
    let rel = file.strip_prefix(src).ok()?;
    let first = rel.components().next()?.as_os_str().to_string_lossy();
    let name = first.strip_suffix(".rs").unwrap_or(&first).to_string();
    (name != "lib" && name != "main").then_some(name)
}

/// Top-level modules each top-level module of the crate at `src` names, outside its tests.
fn graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let modules: BTreeSet<String> = files.iter().filter_map(|f| module_of(src, f)).collect();
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in &files {
        let Some(from) = module_of(src, f) else {
            continue;
        };
        let text = std::fs::read_to_string(f).unwrap();
        // Unit tests may reach anywhere; only the code counts.
        let code = text.split("#[cfg(test)]").next().unwrap_or("");
        let deps = g.entry(from.clone()).or_default();
        for (i, _) in code.match_indices("crate::") {
            let rest = &code[i + "crate::".len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if modules.contains(&name) && name != from {
                deps.insert(name);
            }
        }
    }
    g
}

/// A cycle in the graph, if there is one (as the list of modules around it).
fn cycle(g: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        n: &str,
        g: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|p| p == n) {
            let mut c = path[at..].to_vec();
            c.push(n.to_string());
            return Some(c);
        }
        if done.contains(n) {
            return None;
        }
        path.push(n.to_string());
        for d in g.get(n).into_iter().flatten() {
            if let Some(c) = visit(d, g, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(n.to_string());
        None
    }
    let mut done = BTreeSet::new();
    g.keys()
        .find_map(|n| visit(n, g, &mut Vec::new(), &mut done))
}

fn crate_dirs() -> Vec<PathBuf> {
    let mut dirs = vec![root().join("src")];
    for e in std::fs::read_dir(root().join("crates")).unwrap().flatten() {
        dirs.push(e.path().join("src"));
    }
    dirs
}

#[test]
fn no_crate_has_an_import_cycle_between_its_modules() {
    for src in crate_dirs() {
        let g = graph(&src);
        assert!(!g.is_empty(), "{}: no modules found", src.display());
        assert_eq!(cycle(&g), None, "{}: {g:#?}", src.display());
    }
}

#[test]
fn the_workbench_is_a_view_that_never_reaches_into_the_command_line() {
    let g = graph(&root().join("src"));
    assert!(g["cli"].contains("workbench"), "{g:#?}");
    assert!(!g["workbench"].contains("cli"), "{g:#?}");
}

#[test]
fn the_cycle_finder_finds_cycles() {
    let g: BTreeMap<String, BTreeSet<String>> = [
        ("a", vec!["b"]),
        ("b", vec!["c"]),
        ("c", vec!["a"]),
        ("d", vec![]),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.into_iter().map(String::from).collect()))
    .collect();
    assert_eq!(
        cycle(&g),
        Some(vec!["a".into(), "b".into(), "c".into(), "a".into()])
    );
}

#[test]
fn the_engine_has_no_terminal_watching_or_highlighting_dependency() {
    let manifest = std::fs::read_to_string(root().join("crates/engine/Cargo.toml")).unwrap();
    let deps = manifest
        .split("[dependencies]")
        .nth(1)
        .unwrap()
        .split("\n[")
        .next()
        .unwrap();
    for forbidden in ["ratatui", "crossterm", "notify", "syntect", "clap"] {
        assert!(
            !deps.lines().any(|l| l.trim_start().starts_with(forbidden)),
            "the engine depends on {forbidden}"
        );
    }
    assert!(deps.contains("pyregex"), "{deps}");
}
