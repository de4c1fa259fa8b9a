//! Display names, pointcut and flow strings of the upstream string ABI.

use perfflow_runtime::demangle::display_name;
use perfflow_runtime::site::{intern_region, intern_upstream, Flow, Pointcut};

#[test]
fn nested_itanium_names_are_demangled_without_parameters() {
    assert_eq!(display_name(b"_ZN9SmokeTest3fooEv"), "SmokeTest::foo");
    assert_eq!(display_name(b"_Z3bari"), "bar");
    assert_eq!(display_name(b"_ZNK1a1b3getEv"), "a::b::get");
}

#[test]
fn constructors_destructors_std_and_anonymous_namespaces_are_named() {
    assert_eq!(display_name(b"_ZN3FooC2Ev"), "Foo::Foo");
    assert_eq!(display_name(b"_ZN3FooD1Ev"), "Foo::~Foo");
    assert_eq!(display_name(b"_ZSt4swapv"), "std::swap");
    assert_eq!(
        display_name(b"_ZN12_GLOBAL__N_16helperEv"),
        "(anonymous namespace)::helper"
    );
    assert_eq!(display_name(b"_ZL6staticv"), "static");
}

#[test]
fn templates_and_operators_keep_their_arguments_in_any_process() {
    // No libstdc++ needed: a C program using the upstream ABI sees the same
    // names as the weaver writes.
    assert_eq!(display_name(b"_ZN2ns4workIiEEvT_"), "ns::work<int>");
    assert_eq!(display_name(b"_ZN3FooclEi"), "Foo::operator()");
    assert_eq!(
        display_name(b"_ZN2ns4workIiEEvT_"),
        perfflow_parser::names::display_name("_ZN2ns4workIiEEvT_")
    );
}

#[test]
fn names_that_are_not_manglings_are_shown_as_given() {
    assert_eq!(display_name(b"main"), "main");
    assert_eq!(display_name(b""), "");
    assert_eq!(display_name(b"_Z"), "_Z");
    assert_eq!(display_name(b"_Z99x"), "_Z99x");
    assert_eq!(display_name(b"bad\xffname"), "bad\u{fffd}name");
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
