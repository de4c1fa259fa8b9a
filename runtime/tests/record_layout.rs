//! Layout of the raw record and of the C site descriptor.

use std::ffi::CStr;
use std::mem::{align_of, size_of};

use perfflow_runtime::event::{packable, Kind, RawEvent, FORMAT_VERSION, KIND_MASK};
use perfflow_runtime::site::{Flow, Pointcut, Site};

static SITE: Site = Site::new(Pointcut::Around, Flow::None, c"foo", c"foo.c", None, c"foo");

#[test]
fn raw_record_is_sixteen_bytes() {
    assert_eq!(size_of::<RawEvent>(), 16);
    assert_eq!(align_of::<RawEvent>(), 8);
}

#[test]
fn raw_record_format_version_is_four_since_the_async_id_unwound_payload() {
    assert_eq!(FORMAT_VERSION, 4);
}

#[test]
fn site_descriptor_matches_the_c_struct_layout() {
    // 4 x uint32_t followed by 4 string pointers and the copy word's
    // address, as in perfflow.h (version 2).
    assert_eq!(size_of::<Site>(), 16 + 5 * size_of::<usize>());
    assert_eq!(align_of::<Site>(), align_of::<usize>());
}

#[test]
fn sites_leave_the_kind_bits_of_their_address_free() {
    assert!(align_of::<Site>() as u64 > KIND_MASK);
    assert!(packable(&SITE));
    assert!(!packable(std::ptr::null()));
    let misaligned = (&SITE as *const Site as usize + 1) as *const Site;
    assert!(!packable(misaligned));
    // The edges of the address space, aligned or not.
    let at = |addr: usize| packable(addr as *const Site);
    for addr in [4, 8, usize::MAX - 3, usize::MAX / 2 + 1, 1 << 62] {
        assert!(at(addr), "{addr:#x} is aligned and non-null");
    }
    for addr in [
        1,
        2,
        3,
        5,
        usize::MAX,
        usize::MAX - 1,
        usize::MAX - 2,
        (1 << 62) + 1,
    ] {
        assert!(!at(addr), "{addr:#x} is misaligned");
    }
}

#[test]
fn raw_record_returns_the_site_and_kind_it_was_built_from() {
    for kind in [Kind::Enter, Kind::Exit] {
        let ev = RawEvent::new(123_456_789, &SITE, kind);
        assert_eq!(ev.ts_ns, 123_456_789);
        assert_eq!(ev.site(), &SITE as *const Site);
        assert_eq!(ev.kind(), Some(kind));
    }
}

#[test]
fn zeroed_record_decodes_to_no_kind() {
    let ev = RawEvent {
        ts_ns: 0,
        tagged_site: 0,
    };
    assert_eq!(ev.kind(), None);
}

#[test]
fn site_accessors_read_the_static_strings() {
    assert_eq!(SITE.name(), b"foo");
    assert_eq!(SITE.file(), b"foo.c");
    assert_eq!(SITE.scope(), None);
    assert_eq!(SITE.symbol(), b"foo");
    assert_eq!(SITE.pointcut(), Pointcut::Around);
    let _: &CStr = c"unused";
}
