//! Display names, pointcut and flow strings of the upstream string ABI.

use perfflow_runtime::demangle::{builtin, display_name, strip_signature};
use perfflow_runtime::site::{intern_region, intern_upstream, Flow, Pointcut};

#[test]
fn nested_itanium_names_are_demangled_without_parameters() {
    assert_eq!(
        builtin(b"_ZN9SmokeTest3fooEv").as_deref(),
        Some("SmokeTest::foo")
    );
    assert_eq!(display_name(b"_ZN9SmokeTest3fooEv"), "SmokeTest::foo");
    assert_eq!(builtin(b"_Z3bari").as_deref(), Some("bar"));
    assert_eq!(builtin(b"_ZNK1a1b3getEv").as_deref(), Some("a::b::get"));
}

#[test]
fn constructors_destructors_std_and_anonymous_namespaces_are_named() {
    assert_eq!(builtin(b"_ZN3FooC2Ev").as_deref(), Some("Foo::Foo"));
    assert_eq!(builtin(b"_ZN3FooD1Ev").as_deref(), Some("Foo::~Foo"));
    assert_eq!(builtin(b"_ZSt4swapv").as_deref(), Some("std::swap"));
    assert_eq!(
        builtin(b"_ZN12_GLOBAL__N_16helperEv").as_deref(),
        Some("(anonymous namespace)::helper")
    );
    assert_eq!(builtin(b"_ZL6staticv").as_deref(), Some("static"));
    assert_eq!(builtin(b"_ZN1a3fooB5cxx11Ev").as_deref(), Some("a::foo"));
}

#[test]
fn manglings_the_builtin_reader_does_not_know_are_left_alone() {
    assert_eq!(builtin(b"_ZN1a3fooIiEEvT_"), None);
    assert_eq!(builtin(b"_ZN1aplERKS_"), None);
    assert_eq!(builtin(b"_Z"), None);
    assert_eq!(builtin(b"_Z99x"), None);
}

#[test]
fn c_names_are_shown_as_given() {
    assert_eq!(display_name(b"main"), "main");
    assert_eq!(display_name(b""), "");
}

#[test]
fn full_signatures_are_cut_down_to_the_qualified_name() {
    assert_eq!(strip_signature("SmokeTest::foo()"), "SmokeTest::foo");
    assert_eq!(strip_signature("void ns::f<int>(int)"), "ns::f<int>");
    assert_eq!(
        strip_signature("Foo::operator()(int) const"),
        "Foo::operator()"
    );
    assert_eq!(
        strip_signature("bool operator< <int>(A<int> const&, A<int> const&)"),
        "operator< <int>"
    );
    assert_eq!(
        strip_signature("(anonymous namespace)::g()"),
        "(anonymous namespace)::g"
    );
    assert_eq!(
        strip_signature("Foo::operator int() const"),
        "Foo::operator int"
    );
    assert_eq!(
        strip_signature("main::{lambda(int)#1}::operator()(int) const"),
        "main::{lambda(int)#1}::operator()"
    );
}

#[test]
fn pointcut_strings_parse_like_the_upstream_abi() {
    assert_eq!(Pointcut::parse(Some(b"around"), false), Pointcut::Around);
    assert_eq!(Pointcut::parse(Some(b"before"), false), Pointcut::Before);
    assert_eq!(Pointcut::parse(Some(b"after"), false), Pointcut::After);
    assert_eq!(
        Pointcut::parse(Some(b"around_async"), false),
        Pointcut::AroundAsync
    );
    assert_eq!(
        Pointcut::parse(Some(b"before_async"), false),
        Pointcut::BeforeAsync
    );
    assert_eq!(
        Pointcut::parse(Some(b"AFTER_ASYNC"), false),
        Pointcut::AfterAsync
    );
    assert_eq!(
        Pointcut::parse(Some(b"before"), true),
        Pointcut::BeforeAsync
    );
    assert_eq!(Pointcut::parse(None, false), Pointcut::Around);
    assert_eq!(Pointcut::parse(Some(b"bogus"), false), Pointcut::Around);
}

#[test]
fn flow_strings_parse_and_na_means_none() {
    assert_eq!(Flow::parse(Some(b"in")), Flow::In);
    assert_eq!(Flow::parse(Some(b"OUT")), Flow::Out);
    assert_eq!(Flow::parse(Some(b"inout")), Flow::InOut);
    assert_eq!(Flow::parse(Some(b"outin")), Flow::OutIn);
    assert_eq!(Flow::parse(Some(b"NA")), Flow::None);
    assert_eq!(Flow::parse(None), Flow::None);
}

#[test]
fn interning_the_same_strings_twice_returns_the_same_site() {
    let a = intern_upstream(
        false,
        Some(b"m.cpp"),
        Some(b"_Z1fv"),
        Some(b"NA"),
        Some(b"NA"),
        Some(b"around"),
    )
    .unwrap();
    let b = intern_upstream(
        false,
        Some(b"m.cpp"),
        Some(b"_Z1fv"),
        Some(b"NA"),
        Some(b"NA"),
        Some(b"around"),
    )
    .unwrap();
    assert!(std::ptr::eq(a, b));
    assert_eq!(a.name(), b"f");
    assert_eq!(a.file(), b"m.cpp");
    assert_eq!(a.scope(), None);
    assert_eq!(a.symbol(), b"_Z1fv");
    let c = intern_upstream(
        true,
        Some(b"m.cpp"),
        Some(b"_Z1fv"),
        Some(b"net"),
        Some(b"NA"),
        Some(b"around"),
    )
    .unwrap();
    assert!(!std::ptr::eq(a, c));
    assert_eq!(c.pointcut(), Pointcut::AroundAsync);
    assert_eq!(c.scope(), Some(&b"net"[..]));
}

#[test]
fn region_sites_are_around_sites_in_the_region_category() {
    let r = intern_region(b"phase one").unwrap();
    assert!(std::ptr::eq(r, intern_region(b"phase one").unwrap()));
    assert_eq!(r.pointcut(), Pointcut::Around);
    assert_eq!(r.name(), b"phase one");
    assert_eq!(r.file(), b"region");
}
