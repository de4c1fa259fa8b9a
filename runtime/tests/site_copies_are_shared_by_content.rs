//! The runtime records its own copy of a woven site, made on the site's
//! first event and found again through the site's copy word. A library
//! loaded and unloaded in a loop brings fresh sites (fresh words) each
//! time: their copies are shared by content, so the loop does not grow the
//! runtime's memory, and a site with other content gets its own copy.

use std::sync::atomic::AtomicPtr;

use perfflow_runtime::site::{copied_sites, owned, Flow, Pointcut, Site};

/// A site as one load of a library would hold it: its own zeroed word.
fn fresh_site(name: &'static std::ffi::CStr) -> &'static Site {
    let word: &'static AtomicPtr<Site> = Box::leak(Box::new(AtomicPtr::new(std::ptr::null_mut())));
    Box::leak(Box::new(
        Site::new(Pointcut::Around, Flow::None, name, c"lib.c", None, name).with_copy_word(word),
    ))
}

#[test]
fn reloaded_sites_share_one_copy_and_other_sites_get_their_own() {
    let before = copied_sites();
    let first = fresh_site(c"reloaded_work");
    // SAFETY: a whole version 2 site.
    let copy = unsafe { owned(first) }.expect("a copy");
    assert!(!std::ptr::eq(copy, first), "the copy is the runtime's own");
    // SAFETY: the copy is a site the runtime keeps for the process.
    let copied = unsafe { &*copy };
    assert_eq!(copied.name(), b"reloaded_work");
    assert_eq!(copied.file(), b"lib.c");
    // SAFETY: as above.
    assert_eq!(
        unsafe { owned(first) },
        Some(copy),
        "found again through the word"
    );
    for _ in 0..1000 {
        let again = fresh_site(c"reloaded_work");
        // SAFETY: as above.
        assert_eq!(unsafe { owned(again) }, Some(copy));
    }
    let other = fresh_site(c"other_work__");
    // SAFETY: as above.
    let other_copy = unsafe { owned(other) }.expect("a copy");
    assert_ne!(other_copy, copy);
    // SAFETY: as above.
    assert_eq!(unsafe { &*other_copy }.name(), b"other_work__");
    assert_eq!(copied_sites() - before, 2);
}

#[test]
fn a_site_without_a_copy_word_is_recorded_by_address() {
    static PLAIN: Site = Site::new(
        Pointcut::Around,
        Flow::None,
        c"plain",
        c"p.c",
        None,
        c"plain",
    );
    // SAFETY: a whole site.
    assert_eq!(unsafe { owned(&PLAIN) }, Some(&PLAIN as *const Site));
}
