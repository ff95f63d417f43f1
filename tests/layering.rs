//! The layering written at the top of `src/lib.rs`, enforced: a module imports only modules on
//! lower layers (never its own layer's neighbours, never a layer above), and the workbench
//! reaches the core only through the front ends' Engine API and the shared types. Read from
//! the source, so a new `use` that breaks it fails here before anyone has to draw the graph.

use std::collections::BTreeSet;
use std::path::Path;

/// Bottom to top. A module may import any module on a lower line.
const LAYERS: &[&[&str]] = &[
    &[
        "types",
        "folders",
        "terminal_text",
        "jsonrpc",
        "protocol",
        "config",
    ],
    &["intercept"],
    &["downstream", "store"],
    &["history"],
    &["session"],
    &["upstream"],
    &["frontend", "check", "import", "sample_server"],
    &["tui"],
    &["cli"],
];

/// Narrower rules on top of the layers: these modules may import only the listed ones.
const ONLY: &[(&str, &[&str])] = &[(
    "tui",
    &[
        "types",
        "folders",
        "terminal_text",
        "config",
        "protocol",
        "frontend",
    ],
)];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

/// Every top-level module a piece of Rust source names through `crate::`.
fn imports(source: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in source.lines() {
        let code = line.split("//").next().unwrap_or_default();
        let mut rest = code;
        while let Some(i) = rest.find("crate::") {
            rest = &rest[i + "crate::".len()..];
            if let Some(group) = rest.strip_prefix('{') {
                // `crate::{a::b, c}`: the first name of each item.
                let inner = group.split('}').next().unwrap_or_default();
                for item in inner.split(',') {
                    let name: String = item
                        .trim()
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    if !name.is_empty() {
                        out.insert(name);
                    }
                }
            } else {
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() {
                    out.insert(name);
                }
            }
        }
    }
    out
}

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read src") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn no_module_imports_a_module_above_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut broken = Vec::new();
    let mut seen = BTreeSet::new();
    for file in files {
        let rel = file.strip_prefix(&src).expect("under src");
        let first = rel.components().next().expect("component");
        let module = first
            .as_os_str()
            .to_string_lossy()
            .trim_end_matches(".rs")
            .to_owned();
        if module == "lib" || module == "main" {
            continue;
        }
        seen.insert(module.clone());
        let layer = layer_of(&module)
            .unwrap_or_else(|| panic!("{module} is on no layer: add it to LAYERS and to lib.rs"));
        let source = std::fs::read_to_string(&file).expect("read");
        for used in imports(&source) {
            if used == module || used == "PROCESS_START" || used == "init_tls" {
                continue;
            }
            let Some(other) = layer_of(&used) else {
                broken.push(format!(
                    "{}: imports crate::{used}, which is on no layer",
                    rel.display()
                ));
                continue;
            };
            if other >= layer {
                broken.push(format!(
                    "{}: `{module}` (layer {layer}) imports `{used}` (layer {other})",
                    rel.display()
                ));
            }
            if let Some((_, allowed)) = ONLY.iter().find(|(m, _)| *m == module)
                && !allowed.contains(&used.as_str())
            {
                broken.push(format!(
                    "{}: `{module}` may import only {allowed:?}, not `{used}`",
                    rel.display()
                ));
            }
        }
    }
    assert!(broken.is_empty(), "layering broken:\n{}", broken.join("\n"));
    // The table names every module there is, so a new one is placed on purpose.
    for layer in LAYERS {
        for m in *layer {
            assert!(
                seen.contains(*m),
                "LAYERS names `{m}`, which src/ does not have"
            );
        }
    }
}

#[test]
fn the_reader_sees_what_the_test_checks() {
    let found = imports("use crate::{a::b, c};\nlet x = crate::d::e(); // crate::f");
    let want: BTreeSet<String> = ["a", "c", "d"].iter().map(|s| s.to_string()).collect();
    assert_eq!(found, want);
}
