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
        // A crate of one file has no modules to form a circle; any other must show some (or
        // the graph's reader missed them).
        let mut files = Vec::new();
        rust_files(&src, &mut files);
        assert!(
            files.len() < 2 || !g.is_empty(),
            "{}: no modules found",
            src.display()
        );
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

/// The module path of a file of `src` (`src/workbench/update/motion.rs` ->
/// `workbench::update::motion`; a `mod.rs` names its folder).
fn module_path(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts
}

/// Which files of the folder `dir` of the crate at `src` name which others, outside their
/// tests and comments: every `crate::a::b` and `super::b` path (and each item of a grouped
/// `use ...::{x, y}`) is resolved to the longest module that has a file.
fn file_graph(src: &Path, dir: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    rust_files(dir, &mut files);
    let modules: BTreeMap<Vec<String>, String> = files
        .iter()
        .map(|f| {
            let name = f.strip_prefix(src).unwrap().display().to_string();
            (module_path(src, f), name)
        })
        .collect();
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in &files {
        let me = module_path(src, f);
        // `super` from `a/b.rs` is `a`; from `a/b/mod.rs` it is `a` too.
        let parent: Vec<String> = me[..me.len().saturating_sub(1)].to_vec();
        let text = std::fs::read_to_string(f).unwrap();
        let code: String = text
            .split("#[cfg(test)]")
            .next()
            .unwrap_or("")
            .lines()
            .map(|l| l.split("//").next().unwrap_or(""))
            .collect::<Vec<_>>()
            .join("\n");
        let from = modules[&me].clone();
        let deps = g.entry(from.clone()).or_default();
        let mut targets = Vec::new();
        for (head, base) in [("crate::", Vec::new()), ("super::", parent.clone())] {
            for (i, _) in code.match_indices(head) {
                if head == "crate::" && i >= 2 && &code[i - 2..i] == "::" {
                    continue;
                }
                let rest = &code[i + head.len()..];
                let path: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                    .collect();
                let mut parts: Vec<String> = base.clone();
                parts.extend(
                    path.split("::")
                        .filter(|p| !p.is_empty() && *p != "super")
                        .map(String::from),
                );
                let after = &rest[path.len()..];
                if path.ends_with("::") && after.starts_with('{') {
                    let group = &after[1..after.find('}').unwrap_or(after.len())];
                    for item in group.split(',') {
                        let item = item.trim().split("::").next().unwrap_or("").trim();
                        if item.is_empty() {
                            continue;
                        }
                        let mut t = parts.clone();
                        if item != "self" {
                            t.push(item.to_string());
                        }
                        targets.push(t);
                    }
                } else {
                    targets.push(parts);
                }
            }
        }
        for mut t in targets {
            while !t.is_empty() && !modules.contains_key(&t) {
                t.pop();
            }
            if let Some(to) = modules.get(&t)
                && *to != from
            {
                deps.insert(to.clone());
            }
        }
    }
    g
}

#[test]
fn no_file_of_the_workbench_is_in_an_import_circle() {
    let src = root().join("src");
    let g = file_graph(&src, &src.join("workbench"));
    assert!(g.len() > 30, "{g:#?}");
    // The graph sees real edges: the state holds the protocol's data, the run loop's executor
    // starts the parse lane.
    assert!(
        g["workbench/state.rs"].contains("workbench/protocol.rs"),
        "{g:#?}"
    );
    assert!(
        g["workbench/exec.rs"].contains("workbench/worker.rs"),
        "{g:#?}"
    );
    assert_eq!(cycle(&g), None, "{g:#?}");
}
