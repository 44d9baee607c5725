//! Writes the boundary's generated JavaScript before the crate compiles:
//! - `src/wasm/js/contract.js`, the constants of `src/contract.rs` (one source for both sides);
//! - `src/wasm/generated/boundary.js`, the modules of `src/wasm/js/` as one ES module, the one
//!   that wasm-bindgen's `module` attribute names (its test runner serves each such module as
//!   a file, and its server stalled when a browser fetched many at once).
//!
//! The modules are concatenated in an order where each follows those it imports, without
//! their import lines; everything else is left as written. The build fails on an import
//! that is not `import { … } from "./….js";`, on one of a name the other module does not
//! export, on a cycle, and on two modules declaring the same top-level name. Neither file is
//! committed; both are written only when their text changes.

use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::path::{Path, PathBuf};

#[path = "src/contract.rs"]
mod contract;

const JS_ROOT: &str = "src/wasm/js";
const BUNDLE: &str = "src/wasm/generated/boundary.js";

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=src/contract.rs");
    println!("cargo:rerun-if-changed={JS_ROOT}");
    write_if_changed(
        &Path::new(JS_ROOT).join("contract.js"),
        &contract::javascript(),
    );
    let modules = read_modules(Path::new(JS_ROOT));
    write_if_changed(Path::new(BUNDLE), &bundle(&modules));
}

fn write_if_changed(path: &Path, text: &str) {
    if fs::read_to_string(path).is_ok_and(|old| old == text) {
        return;
    }
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir).unwrap_or_else(|e| panic!("creating {}: {e}", dir.display()));
    }
    fs::write(path, text).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
}

struct Module {
    /// Its imports: (module path, names).
    imports: Vec<(String, Vec<String>)>,
    /// Its lines without the imports.
    body: Vec<String>,
}

/// Every `.js` file under `root`, by its path relative to `root` ("/"-separated).
fn read_modules(root: &Path) -> BTreeMap<String, Module> {
    let mut files = Vec::new();
    collect(root, &mut files);
    let mut modules = BTreeMap::new();
    for file in files {
        let rel = file
            .strip_prefix(root)
            .expect("under the root")
            .to_string_lossy()
            .replace('\\', "/");
        let source =
            fs::read_to_string(&file).unwrap_or_else(|e| panic!("reading {}: {e}", file.display()));
        modules.insert(rel.clone(), parse(&rel, &source));
    }
    for (path, module) in &modules {
        for (from, names) in &module.imports {
            let target = modules.get(from).unwrap_or_else(|| {
                panic!("{JS_ROOT}/{path} imports {from}, which is not a module of {JS_ROOT}")
            });
            let exported = declared(&target.body, true);
            for name in names {
                assert!(
                    exported.contains_key(name.as_str()),
                    "{JS_ROOT}/{path} imports {name} from {from}, which does not export it"
                );
            }
        }
    }
    modules
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries = fs::read_dir(dir).unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()));
    let mut paths: Vec<PathBuf> = entries
        .map(|e| e.expect("a directory entry").path())
        .collect();
    paths.sort();
    for path in paths {
        if path.is_dir() {
            collect(&path, out);
        } else if path.extension().is_some_and(|e| e == "js") {
            out.push(path);
        }
    }
}

fn parse(path: &str, source: &str) -> Module {
    let (mut imports, mut body) = (Vec::new(), Vec::new());
    let mut lines = source.lines();
    while let Some(line) = lines.next() {
        if !line.starts_with("import ") {
            body.push(line.to_string());
            continue;
        }
        let mut statement = line.to_string();
        while !statement.trim_end().ends_with(';') {
            let more = lines
                .next()
                .unwrap_or_else(|| panic!("{JS_ROOT}/{path}: an import without its end"));
            statement.push(' ');
            statement.push_str(more.trim());
        }
        imports.push(parse_import(path, &statement));
    }
    Module { imports, body }
}

/// `import { a, b } from "./x.js";` as ("dir/x.js", [a, b]).
fn parse_import(path: &str, statement: &str) -> (String, Vec<String>) {
    let refuse = || -> ! {
        panic!("{JS_ROOT}/{path}: only `import {{ … }} from \"./….js\";` is bundled: {statement}")
    };
    let rest = statement
        .strip_prefix("import {")
        .unwrap_or_else(|| refuse());
    let (names, from) = rest.split_once('}').unwrap_or_else(|| refuse());
    let from = from.trim();
    let spec = from
        .strip_prefix("from \"")
        .and_then(|s| s.strip_suffix("\";"))
        .unwrap_or_else(|| refuse());
    if !(spec.starts_with("./") || spec.starts_with("../")) || !spec.ends_with(".js") {
        refuse();
    }
    let names: Vec<String> = names
        .split(',')
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .map(String::from)
        .collect();
    if names.iter().any(|n| !is_name(n)) {
        refuse();
    }
    (resolve(path, spec), names)
}

/// `spec` relative to the module at `path`, as a path relative to the root.
fn resolve(path: &str, spec: &str) -> String {
    let mut parts: Vec<&str> = path.split('/').collect();
    parts.pop();
    for part in spec.split('/') {
        match part {
            "." => {}
            ".." => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    parts.join("/")
}

fn is_name(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
        && !s.starts_with(|c: char| c.is_ascii_digit())
}

/// The top-level names the lines declare (only those exported, if `exported`), and the
/// line of each.
fn declared(body: &[String], exported: bool) -> HashMap<&str, usize> {
    let mut names = HashMap::new();
    for (at, line) in body.iter().enumerate() {
        let (is_export, rest) = match line.strip_prefix("export ") {
            Some(rest) => (true, rest),
            None => (false, line.as_str()),
        };
        if exported && !is_export {
            continue;
        }
        let rest = rest.strip_prefix("async ").unwrap_or(rest);
        let (keyword, rest) = match ["function* ", "function ", "class ", "const ", "let "]
            .iter()
            .find_map(|k| rest.strip_prefix(k).map(|r| (*k, r)))
        {
            Some(found) => found,
            None => continue,
        };
        let name_end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '$'))
            .unwrap_or(rest.len());
        names.insert(&rest[..name_end], at);
        if keyword == "const " || keyword == "let " {
            // `const A = 1, B = 2;` declares both.
            for piece in rest.split(", ").skip(1) {
                if let Some((name, _)) = piece.split_once(" = ") {
                    if is_name(name) {
                        names.insert(name, at);
                    }
                }
            }
        }
    }
    names
}

/// The modules as one, each after those it imports.
fn bundle(modules: &BTreeMap<String, Module>) -> String {
    let mut order = Vec::new();
    let mut state: HashMap<&str, bool> = HashMap::new(); // false: visiting, true: done
    fn visit<'a>(
        path: &'a str,
        modules: &'a BTreeMap<String, Module>,
        state: &mut HashMap<&'a str, bool>,
        chain: &mut Vec<&'a str>,
        order: &mut Vec<&'a str>,
    ) {
        match state.get(path) {
            Some(true) => return,
            Some(false) => panic!(
                "the modules of {JS_ROOT} import one another in a cycle: {} -> {path}",
                chain.join(" -> ")
            ),
            None => {}
        }
        state.insert(path, false);
        chain.push(path);
        for (from, _) in &modules[path].imports {
            let (key, _) = modules
                .get_key_value(from)
                .expect("checked in read_modules");
            visit(key, modules, state, chain, order);
        }
        chain.pop();
        state.insert(path, true);
        order.push(path);
    }
    for path in modules.keys() {
        visit(path, modules, &mut state, &mut Vec::new(), &mut order);
    }

    let mut owner: HashMap<&str, &str> = HashMap::new();
    let mut out = String::from(
        "// Generated by build.rs: the modules of src/wasm/js/ as one. Edit those, not this file.\n",
    );
    for path in order {
        let body = &modules[path].body;
        for name in declared(body, false).into_keys() {
            if let Some(other) = owner.insert(name, path) {
                panic!("{JS_ROOT}/{path} and {JS_ROOT}/{other} both declare {name}");
            }
        }
        let start = body.iter().position(|l| !l.trim().is_empty()).unwrap_or(0);
        let end = body
            .iter()
            .rposition(|l| !l.trim().is_empty())
            .map_or(0, |e| e + 1);
        out.push_str(&format!("\n// {JS_ROOT}/{path}\n"));
        for line in &body[start..end.max(start)] {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}
