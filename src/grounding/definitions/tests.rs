use super::*;

const BUDGET: Duration = Duration::from_secs(5);

/// `name` or `Owner::name` for each definition, in document order.
fn defs(language: Language, source: &str) -> Vec<String> {
    let found = definitions(language, source.as_bytes(), BUDGET).unwrap();
    found
        .defs
        .iter()
        .map(|d| match d.owners.as_slice() {
            [] => d.name.clone(),
            owners => format!("{}::{}", owners.join("+"), d.name),
        })
        .collect()
}

fn facts(language: Language, source: &str) -> FileDefs {
    definitions(language, source.as_bytes(), BUDGET).unwrap()
}

#[test]
fn rust_definitions_and_owners() {
    let source = "use std::fmt::{self, Display as D};
mod m { pub fn f() {} }
struct S { a: u8 }
enum E { A, B(u8) }
impl<T> Foo<T> { fn new() -> Self { fn inner() {} Self } }
impl fmt::Display for a::Bar { fn fmt(&self) {} }
trait Tr { fn req(&self); fn def(&self) {} }
const C: u8 = 1; static X: u8 = 2; type Al = u8;
macro_rules! mac { () => {} }";
    assert_eq!(
        defs(Language::Rust, source),
        [
            "m",
            "m::f",
            "S",
            "S::a",
            "E",
            "E::A",
            "E::B",
            "Foo::new",
            "inner",
            "Bar+Display::fmt",
            "Tr",
            "Tr::req",
            "Tr::def",
            "C",
            "X",
            "Al",
            "mac",
        ]
    );
    let found = facts(Language::Rust, source);
    assert_eq!(found.bases, [("Bar".to_string(), "Display".to_string())]);
    for name in ["std", "fmt", "Display", "D"] {
        assert!(found.imports.contains(name), "{name}");
    }
    assert!(!found.imports.contains("use") && !found.imports.contains("self"));
}

#[test]
fn python_definitions_and_owners() {
    let source = "import os.path as osp
from a.b import c, d as e
MAX = 3
class A(B, mod.C, metaclass=M):
    X = 1
    @property
    def f(self):
        local = 2
        def nested(): pass
def g(): pass
";
    assert_eq!(
        defs(Language::Python, source),
        ["MAX", "A", "A::X", "A::f", "nested", "g"]
    );
    let found = facts(Language::Python, source);
    assert_eq!(
        found.bases,
        [
            ("A".to_string(), "B".to_string()),
            ("A".to_string(), "C".to_string())
        ]
    );
    for name in ["os", "osp", "c", "d", "e"] {
        assert!(found.imports.contains(name), "{name}");
    }
}

#[test]
fn javascript_definitions_and_owners() {
    let source = "import x, {y as z} from 'm';
const fs = require('fs');
const h = () => { const local = 1; };
function f() {}
class A extends B { #p() {} m() {} static s = 1; }
module.exports.q = function() {};
App.prototype.start = () => 1;";
    assert_eq!(
        defs(Language::JavaScript, source),
        [
            "h",
            "f",
            "A",
            "A::p",
            "A::m",
            "A::s",
            "exports::q",
            "App::start"
        ]
    );
    let found = facts(Language::JavaScript, source);
    assert_eq!(found.bases, [("A".to_string(), "B".to_string())]);
    for name in ["x", "y", "z", "fs"] {
        assert!(found.imports.contains(name), "{name}");
    }
}

#[test]
fn typescript_and_tsx_definitions() {
    let source = "interface I extends J { m(): void; p: string }
type T = string;
enum E { A }
abstract class A<T> extends B implements I { abstract x(): void; f = 1; }
namespace N { export function g() {} }
declare function d(): void;";
    assert_eq!(
        defs(Language::TypeScript, source),
        [
            "I", "I::m", "I::p", "T", "E", "A", "A::x", "A::f", "N", "N::g", "d"
        ]
    );
    let bases = facts(Language::TypeScript, source).bases;
    assert!(bases.contains(&("A".into(), "B".into())));
    assert!(bases.contains(&("A".into(), "I".into())));
    assert!(bases.contains(&("I".into(), "J".into())));
    assert_eq!(
        defs(Language::Tsx, "export function App() { return <div/>; }"),
        ["App"]
    );
}

#[test]
fn go_definitions_and_owners() {
    let source = "package p
import (
 f \"fmt\"
 \"net/http\"
)
type B struct { X, Y int }
type I interface { M() }
type A = B
func (b *B) Desc() {}
func (B) V() {}
func New() *B { var local = 1; return nil }
const C = 1
var V2 = 2
";
    assert_eq!(
        defs(Language::Go, source),
        [
            "B", "B::X", "B::Y", "I", "I::M", "A", "B::Desc", "B::V", "New", "C", "V2"
        ]
    );
    let found = facts(Language::Go, source);
    for name in ["f", "fmt", "net", "http"] {
        assert!(found.imports.contains(name), "{name}");
    }
}

#[test]
fn garbage_does_not_panic() {
    for language in [
        Language::Rust,
        Language::Python,
        Language::JavaScript,
        Language::TypeScript,
        Language::Tsx,
        Language::Go,
    ] {
        let _ = definitions(language, b"\xff\xfe{{{ fn ( class :: \0", BUDGET);
    }
}
