//! Writes the boundary's generated JavaScript before the crate compiles:
//! - `src/wasm/js/contract.js`, the constants of `src/contract.rs` (one source for both sides);
//! - `src/wasm/generated/boundary.js`, the modules of `src/wasm/js/` as one ES module, the one
//!   that wasm-bindgen's `module` attribute names (its test runner serves each such module as
//!   a file, and its server stalled when a browser fetched many at once).
//!
//! The modules are concatenated in an order where each follows those it imports, without
//! their import lines. A module whose first line is the marker `// @eager` (one that every
//! call runs) is written so that V8 compiles it when the package is imported rather than on
//! the first call: see `eager_form`. Everything else is left as written. The build fails on an
//! import that is not `import { … } from "./….js";`, on one of a name the other module does
//! not export, on a cycle, and on two modules declaring the same top-level name. Neither file
//! is committed; both are written only when their text changes.

use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::path::{Path, PathBuf};

#[path = "src/contract.rs"]
mod contract;

const JS_ROOT: &str = "src/wasm/js";
const BUNDLE: &str = "src/wasm/generated/boundary.js";
/// The first line of a module that every call runs (`// @eager: ` and why, in words).
const EAGER: &str = "// @eager";

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
    /// Whether it starts with the `EAGER` marker.
    eager: bool,
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
    let eager = source.lines().next().is_some_and(|l| {
        l.strip_prefix(EAGER)
            .is_some_and(|r| r.is_empty() || r.starts_with(':'))
    });
    if let Some(at) = source.lines().skip(1).position(|l| l.contains(EAGER)) {
        panic!(
            "{JS_ROOT}/{path}:{}: `{EAGER}` marks a module only as its first line",
            at + 2
        );
    }
    let mut lines = source.lines();
    if eager {
        lines.next(); // a directive to build.rs, not shipped
    }
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
    Module {
        imports,
        body,
        eager,
    }
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
    !s.is_empty() && s.chars().all(is_name_char) && !s.starts_with(|c: char| c.is_ascii_digit())
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
        let body = &body[start..end.max(start)];
        let body = if modules[path].eager {
            eager_form(path, body)
        } else {
            body.to_vec()
        };
        out.push_str(&format!("\n// {JS_ROOT}/{path}\n"));
        for line in &body {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// The lines of a module that every call runs, written so that V8 compiles its functions when
/// the bundle is imported: V8 compiles a function on its first call unless it is a function
/// expression in parentheses (the "PIFE" heuristic), which it compiles with the code around
/// it. Each top-level `function f(…) {…}` becomes `const f = (function f(…) {…});`, and the
/// methods and getters of each top-level class move out of its body into
/// `Object.defineProperties(C.prototype, {…})` as such expressions, with the flags a class
/// gives them (a method cannot be one). A `const` is not hoisted: the module's top-level code
/// may call only functions defined above it.
///
/// This reads the modules' layout: a top-level function or class starts at column 0 and ends
/// with the next line that starts there, `}`; a class member starts at column 2 and ends with
/// the next line that starts there, `  }`. Anything else fails the build, saying so.
fn eager_form(path: &str, body: &[String]) -> Vec<String> {
    let mut out = Vec::with_capacity(body.len() + 32);
    let mut i = 0;
    while i < body.len() {
        let line = &body[i];
        if let Some((export, name, rest)) = function_head(line) {
            let end = block_end(path, body, i, 0, &format!("function {name}"));
            if end == i {
                out.push(format!("{export}const {name} = ({rest});"));
            } else {
                out.push(format!("{export}const {name} = ({rest}"));
                out.extend_from_slice(&body[i + 1..end]);
                out.push("});".to_string());
            }
            i = end + 1;
        } else if let Some(name) = class_head(line) {
            let end = block_end(path, body, i, 0, &format!("class {name}"));
            out.extend(class_form(path, name, &body[i..=end]));
            i = end + 1;
        } else {
            out.push(line.clone());
            i += 1;
        }
    }
    out
}

/// `[export ][async ]function[*] name(…` as (the `export ` or "", name, the line from `async`
/// or `function` on).
fn function_head(line: &str) -> Option<(&str, &str, &str)> {
    let (export, rest) = match line.strip_prefix("export ") {
        Some(rest) => ("export ", rest),
        None => ("", line),
    };
    let after = rest.strip_prefix("async ").unwrap_or(rest);
    let after = after
        .strip_prefix("function ")
        .or_else(|| after.strip_prefix("function*"))?
        .trim_start();
    let name = &after[..after.find('(')?];
    is_name(name).then_some((export, name, rest))
}

/// The name of the class that `[export ]class Name[ extends …] {` declares.
fn class_head(line: &str) -> Option<&str> {
    let rest = line.strip_prefix("export ").unwrap_or(line);
    let rest = rest.strip_prefix("class ")?;
    let name = &rest[..rest.find(|c: char| !is_name_char(c))?];
    (is_name(name) && rest.ends_with('{')).then_some(name)
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '$'
}

/// The last line of the block (`what`) that starts at `lines[start]`, at column `indent`:
/// `start` itself when the block closes on its line, else the next line that starts at that
/// column, which must be `}`.
fn block_end(path: &str, lines: &[String], start: usize, indent: usize, what: &str) -> usize {
    let first = &lines[start];
    if first.trim_end().ends_with('}') && first.matches('{').count() == first.matches('}').count() {
        return start;
    }
    let at_column = |l: &String| {
        l.len() > indent
            && l.as_bytes()[..indent].iter().all(|&b| b == b' ')
            && !l.as_bytes()[indent].is_ascii_whitespace()
    };
    let end = (start + 1..lines.len())
        .find(|&k| at_column(&lines[k]))
        .unwrap_or_else(|| panic!("{JS_ROOT}/{path}: {what} has no end (@eager form)"));
    let close = format!("{}}}", " ".repeat(indent));
    assert!(
        lines[end] == close,
        "{JS_ROOT}/{path}: {what} must end with a line `{close}` (the first line after it at its \
         column; build.rs writes an @eager module by its layout), not `{}`",
        lines[end]
    );
    end
}

/// A class (`lines`, from its head to its `}`) with its methods and getters moved out into
/// `Object.defineProperties`; the constructor and the comments before it stay.
fn class_form(path: &str, class: &str, lines: &[String]) -> Vec<String> {
    let mut kept = vec![lines[0].clone()];
    let mut moved: Vec<String> = Vec::new();
    let mut pending: Vec<String> = Vec::new(); // comments and blank lines before a member
    let last = lines.len() - 1;
    let mut k = 1;
    while k < last {
        let line = &lines[k];
        let code = line.trim_start();
        if code.is_empty()
            || code.starts_with("//")
            || code.starts_with("/*")
            || code.starts_with('*')
        {
            pending.push(line.clone());
            k += 1;
            continue;
        }
        let member = line
            .strip_prefix("  ")
            .filter(|m| !m.starts_with(' '))
            .unwrap_or_else(|| {
                panic!("{JS_ROOT}/{path}: class {class}: a member must start at column 2: `{line}`")
            });
        let (kind, head) = match member.strip_prefix("get ") {
            Some(head) => ("get", head),
            None => ("value", member),
        };
        let name = &head[..head.find('(').unwrap_or(0)];
        let end = block_end(path, lines, k, 2, &format!("{class}.{name}"));
        if kind == "value" && name == "constructor" {
            kept.append(&mut pending);
            kept.extend_from_slice(&lines[k..=end]);
            k = end + 1;
            continue;
        }
        assert!(
            is_name(name),
            "{JS_ROOT}/{path}: class {class}: `{member}`: an @eager module's classes may have a \
             constructor, methods and getters (no static, async or generator members, setters, \
             private names or fields): build.rs moves the methods and getters out of the class"
        );
        let code: Vec<&str> = std::iter::once(&head[name.len()..])
            .chain(lines[k + 1..end].iter().map(String::as_str))
            .filter(|l| !l.trim_start().starts_with("//") && !l.trim_start().starts_with('*'))
            .collect();
        for word in [name, "super"] {
            assert!(
                !code.iter().any(|l| uses_name(l, word)),
                "{JS_ROOT}/{path}: {class}.{name} uses the name `{word}`: moved out of the class \
                 as `function {name}(…)` (@eager form), it would mean something else (rename it)"
            );
        }
        if moved.is_empty() {
            pending.retain(|l| !l.trim().is_empty());
        }
        moved.append(&mut pending);
        let flags = if kind == "get" {
            "configurable: true"
        } else {
            "writable: true, configurable: true"
        };
        if end == k {
            moved.push(format!(
                "  {name}: {{ {kind}: (function {head}), {flags} }},"
            ));
        } else {
            moved.push(format!("  {name}: {{ {kind}: (function {head}"));
            moved.extend_from_slice(&lines[k + 1..end]);
            moved.push(format!("  }}), {flags} }},"));
        }
        k = end + 1;
    }
    kept.append(&mut pending);
    while kept.last().is_some_and(|l| l.trim().is_empty()) {
        kept.pop();
    }
    kept.push(lines[last].clone());
    if !moved.is_empty() {
        kept.push(format!("Object.defineProperties({class}.prototype, {{"));
        kept.append(&mut moved);
        kept.push("});".to_string());
    }
    kept
}

/// Whether `text` has `name` as a word that is not a property (`.name`).
fn uses_name(text: &str, name: &str) -> bool {
    text.match_indices(name).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + name.len()..].chars().next();
        !before.is_some_and(|c| c == '.' || is_name_char(c)) && !after.is_some_and(is_name_char)
    })
}
