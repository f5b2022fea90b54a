//! Symbol resolution: whether a cited symbol is defined in the tree.
//!
//! A symbol is looked up in a [`NameIndex`] of outlined files: first those
//! its entry covers, then everything the whole-scope search outlined (see
//! [`super::outlines`]). Against an index, `member` (the last segment) must
//! be defined, and when the citation is qualified (`Owner::member`,
//! `owner.member()`), its owner must fit:
//! - the definition sits in `Owner` (an `impl`, class, trait, interface,
//!   enum, struct or `mod`), or in a type `Owner` extends or implements; or
//! - `Owner` is the module of the file that defines it (`report::render`
//!   for `render` in `report.rs` or `report/mod.rs`).
//!
//! On the whole scope only, an owner the tree knows nothing about (no
//! definition, module, directory or import by that name) is taken to be a
//! variable (`app.run()`), and the member alone decides.
//!
//! A symbol that is not in the tree may still be real: it is **external**,
//! and not a citation of the tree, when its root is `std`/`core`/`alloc`,
//! or when its root, owner or (unqualified) name is imported by the files
//! searched or is a name of a language's standard prelude ([`PRELUDE`]) and
//! is not itself defined in the tree. Anything else not found is invented.

use std::collections::{HashMap, HashSet};
use std::sync::LazyLock;

use super::definitions::FileDefs;
use super::extract::SymbolRef;
use super::scope::split_last;

/// How deep [`NameIndex::inherits`] follows base types.
const MAX_BASE_DEPTH: usize = 4;

/// Roots of Rust's standard library.
const STD_ROOTS: &[&str] = &["std", "core", "alloc"];

/// Names every program of a supported language may use without defining or
/// importing them: Rust's prelude types and their most common methods,
/// Python's builtins, JavaScript's globals and Go's builtins. Kept short on
/// purpose: a name listed here is never called invented.
#[rustfmt::skip]
const PRELUDE: &[&str] = &[
    // Rust
    "Arc", "Box", "Cell", "Clone", "Cow", "Default", "Display", "Debug", "Drop", "Err", "Fn",
    "FnMut", "FnOnce", "From", "HashMap", "HashSet", "BTreeMap", "BTreeSet", "Into", "Iterator",
    "Mutex", "None", "Ok", "Option", "Path", "PathBuf", "Rc", "RefCell", "Result", "RwLock",
    "Some", "String", "Vec", "VecDeque", "and_then", "as_ref", "as_str", "clone", "collect",
    "contains", "expect", "filter", "find", "flat_map", "fold", "from", "get", "insert", "into",
    "into_iter", "is_empty", "is_none", "is_some", "iter", "iter_mut", "join", "len", "lock",
    "map", "map_err", "ok", "ok_or", "parse", "push", "remove", "spawn", "split", "to_owned",
    "to_string", "trim", "unwrap", "unwrap_or", "unwrap_or_default", "unwrap_or_else",
    // Python
    "abs", "all", "any", "bool", "callable", "dict", "enumerate", "eval", "exec", "float",
    "format", "getattr", "hasattr", "input", "int", "isinstance", "issubclass", "list", "max",
    "min", "next", "object", "open", "print", "property", "range", "repr", "reversed", "round",
    "set", "setattr", "sorted", "staticmethod", "classmethod", "str", "sum", "super", "tuple",
    "type", "zip", "__init__",
    // JavaScript / TypeScript
    "Array", "Date", "Error", "JSON", "Map", "Math", "Number", "Object", "Promise", "Set",
    "Symbol", "console", "document", "fetch", "module", "parseFloat", "parseInt", "process",
    "require", "setInterval", "setTimeout", "window",
    // Go
    "append", "cap", "close", "copy", "delete", "make", "new", "panic", "println", "recover",
];

static PRELUDE_SET: LazyLock<HashSet<&'static str>> =
    LazyLock::new(|| PRELUDE.iter().copied().collect());

/// File stems that name their directory's module rather than their own.
const MODULE_FILES: &[&str] = &["mod", "lib", "main", "__init__", "index"];

/// Where a symbol was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SymbolResolution {
    /// Defined in the tree.
    Found,
    /// Not the tree's (standard library, imported, prelude): not counted.
    External,
    /// Not in the tree.
    Missing,
    /// Not found, but the outline budget or an unreadable file means it
    /// could have been missed: counted apart.
    Unchecked,
}

/// One definition as the index keeps it.
#[derive(Debug, Clone)]
struct Entry {
    owners: Vec<String>,
    module: String,
}

/// The names defined, imported and extended in a set of files.
#[derive(Debug, Default)]
pub(crate) struct NameIndex {
    defs: HashMap<String, Vec<Entry>>,
    modules: HashSet<String>,
    imports: HashSet<String>,
    bases: HashMap<String, Vec<String>>,
}

impl NameIndex {
    /// Add the definitions of the file at `rel`.
    pub(crate) fn add(&mut self, rel: &str, defs: &FileDefs) {
        let module = module_of(rel);
        self.modules.insert(module.clone());
        for def in &defs.defs {
            self.defs.entry(def.name.clone()).or_default().push(Entry {
                owners: def.owners.clone(),
                module: module.clone(),
            });
        }
        self.imports.extend(defs.imports.iter().cloned());
        for (ty, base) in &defs.bases {
            self.bases.entry(ty.clone()).or_default().push(base.clone());
        }
    }

    /// Whether the tree defines `name` or has a module by that name.
    fn defines(&self, name: &str) -> bool {
        self.defs.contains_key(name) || self.modules.contains(name)
    }

    /// Whether `ty` extends or implements `base`, within a few steps.
    fn inherits(&self, ty: &str, base: &str) -> bool {
        let mut frontier = vec![ty];
        for _ in 0..MAX_BASE_DEPTH {
            let next: Vec<&str> = frontier
                .iter()
                .filter_map(|t| self.bases.get(*t))
                .flatten()
                .map(String::as_str)
                .collect();
            if next.contains(&base) {
                return true;
            }
            if next.is_empty() {
                return false;
            }
            frontier = next;
        }
        false
    }

    /// Whether `symbol` is defined here. `lenient` (the whole scope) lets an
    /// owner the tree does not know stand for a variable.
    pub(crate) fn finds(
        &self,
        symbol: &SymbolRef,
        lenient: bool,
        is_dir_name: impl Fn(&str) -> bool,
    ) -> bool {
        let Some(entries) = self.defs.get(symbol.member()) else {
            return false;
        };
        let Some(owner) = symbol.owner() else {
            return true;
        };
        let fits = entries.iter().any(|entry| {
            entry.module == owner
                || entry
                    .owners
                    .iter()
                    .any(|o| o == owner || self.inherits(owner, o))
        });
        fits || (lenient
            && !self.defines(owner)
            && !self.imports.contains(owner)
            && !is_dir_name(owner))
    }

    /// Whether `symbol`, not found here, belongs to something outside the
    /// tree (see the module doc).
    pub(crate) fn is_external(&self, symbol: &SymbolRef) -> bool {
        let outside = |name: &str| {
            !self.defines(name) && (self.imports.contains(name) || PRELUDE_SET.contains(name))
        };
        STD_ROOTS.contains(&symbol.root())
            || outside(symbol.root())
            || symbol.owner().is_some_and(outside)
            || (symbol.owner().is_none() && outside(symbol.member()))
    }
}

/// The module a file's definitions belong to: its stem, or its directory's
/// name for `mod.rs`, `__init__.py`, `index.ts` and the like.
fn module_of(rel: &str) -> String {
    let (parent, name) = split_last(rel);
    let stem = name.split('.').next().unwrap_or(name);
    match parent {
        Some(parent) if MODULE_FILES.contains(&stem) => split_last(parent).1.to_string(),
        _ => stem.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grounding::definitions::definitions;
    use crate::outline::Language;
    use std::time::Duration;

    fn index(files: &[(&str, Language, &str)]) -> NameIndex {
        let mut index = NameIndex::default();
        for (rel, language, source) in files {
            let defs = definitions(*language, source.as_bytes(), Duration::from_secs(5)).unwrap();
            index.add(rel, &defs);
        }
        index
    }

    fn symbol(segments: &[&str]) -> SymbolRef {
        SymbolRef {
            text: segments.join("::"),
            segments: segments.iter().map(|s| s.to_string()).collect(),
        }
    }

    fn rust_tree() -> NameIndex {
        index(&[
            (
                "src/engine.rs",
                Language::Rust,
                "use std::collections::HashMap;\npub struct Engine;\nimpl Engine { pub fn start(&self) {} }\n\
                 pub trait Tool { fn run(&self); fn ends(&self) -> bool { false } }\n\
                 impl Tool for Engine { fn run(&self) {} }\npub fn free() {}",
            ),
            ("src/report/mod.rs", Language::Rust, "pub fn render() {}"),
            (
                "src/server.rs",
                Language::Rust,
                "pub struct Server;\nimpl Server { fn stop(&self) {} }",
            ),
        ])
    }

    fn no_dirs(_: &str) -> bool {
        false
    }

    #[test]
    fn members_must_sit_in_their_owner() {
        let tree = rust_tree();
        assert!(tree.finds(&symbol(&["Engine", "start"]), false, no_dirs));
        assert!(tree.finds(&symbol(&["free"]), false, no_dirs));
        assert!(tree.finds(&symbol(&["Tool", "run"]), false, no_dirs));
        assert!(
            !tree.finds(&symbol(&["Engine", "stop"]), true, no_dirs),
            "stop is Server's"
        );
        assert!(!tree.finds(&symbol(&["Engine", "frobnicate"]), true, no_dirs));
    }

    #[test]
    fn inherited_members_and_modules_fit() {
        let tree = rust_tree();
        assert!(
            tree.finds(&symbol(&["Engine", "ends"]), false, no_dirs),
            "a trait's default method"
        );
        assert!(tree.finds(&symbol(&["report", "render"]), false, no_dirs));
        assert!(tree.finds(&symbol(&["engine", "free"]), false, no_dirs));
    }

    #[test]
    fn unknown_owners_are_variables_only_on_the_whole_scope() {
        let tree = rust_tree();
        assert!(!tree.finds(&symbol(&["app", "start"]), false, no_dirs));
        assert!(tree.finds(&symbol(&["app", "start"]), true, no_dirs));
        assert!(!tree.finds(&symbol(&["src", "start"]), true, |d| d == "src"));
    }

    #[test]
    fn library_names_are_external() {
        let tree = rust_tree();
        for external in [
            &["std", "fs", "read"][..],
            &["HashMap", "new"],
            &["Vec", "with_capacity"],
            &["unwrap"],
        ] {
            assert!(tree.is_external(&symbol(external)), "{external:?}");
        }
        for invented in [
            &["Engine", "frobnicate"][..],
            &["frobnicate"],
            &["Turbo", "go"],
        ] {
            assert!(!tree.is_external(&symbol(invented)), "{invented:?}");
        }
    }

    #[test]
    fn an_imported_name_the_tree_defines_is_not_external() {
        let tree = index(&[
            (
                "app.py",
                Language::Python,
                "import os\nfrom engine import Engine\n",
            ),
            (
                "engine.py",
                Language::Python,
                "class Engine:\n    def start(self): pass\n",
            ),
        ]);
        assert!(tree.is_external(&symbol(&["os", "path", "join"])));
        assert!(!tree.is_external(&symbol(&["Engine", "frobnicate"])));
        assert!(tree.finds(&symbol(&["Engine", "start"]), false, no_dirs));
    }

    #[test]
    fn module_names_of_files() {
        for (file, module) in [
            ("src/report/mod.rs", "report"),
            ("pkg/__init__.py", "pkg"),
            ("web/index.ts", "web"),
            ("engine.rs", "engine"),
            ("lib.rs", "lib"),
        ] {
            assert_eq!(module_of(file), module, "{file}");
        }
    }
}
