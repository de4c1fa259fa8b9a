//! Finding the process's one runtime and calling it through its C interface
//! (`runtime/include/perfflow.h`).
//!
//! The functions are looked up with `dlsym` in the library chosen by
//! [`init`] and called through pointers: one indirect call each, no lock.

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

use perfflow_runtime::site::Site;

/// Names the runtime library to use when none is loaded yet.
const ENV_VAR: &str = "PERFFLOW_RUNTIME_LIB";

/// The SONAME of the shared runtime.
const SONAME: &CStr = c"libperfflow_runtime.so";

type SiteFn = unsafe extern "C" fn(*const Site);
type SiteIdFn = unsafe extern "C" fn(*const Site, u64);
type WeaveFn = unsafe extern "C" fn(
    c_int,
    *const c_char,
    *const c_char,
    *const c_char,
    *const c_char,
    *const c_char,
);
type RegionFn = unsafe extern "C" fn(*const c_char);
type AsyncBeginFn = unsafe extern "C" fn(*const c_char, *const c_char) -> u64;
type AsyncEndFn = unsafe extern "C" fn(*const c_char, *const c_char, u64);
type DroppedFn = extern "C" fn() -> u64;
type FinishFn = extern "C" fn();

/// The C interface of one runtime.
pub struct Api {
    site_enter: SiteFn,
    site_exit: SiteFn,
    site_exit_unwind: SiteFn,
    site_enter_id: SiteIdFn,
    site_exit_id: SiteIdFn,
    weave_before: WeaveFn,
    weave_after: WeaveFn,
    region_begin: RegionFn,
    region_end: RegionFn,
    region_end_unwind: RegionFn,
    async_begin: AsyncBeginFn,
    async_end: AsyncEndFn,
    async_end_unwind: AsyncEndFn,
    dropped: DroppedFn,
    finish: FinishFn,
    enabled: &'static AtomicBool,
    origin: String,
}

static API: OnceLock<Api> = OnceLock::new();

/// The runtime chosen by [`init`], which the module's initialisation runs
/// before anything can call this.
pub fn get() -> &'static Api {
    API.get().expect("perfflow._native initialised")
}

// The calls below forward to the runtime's C interface, whose contracts the
// callers keep: sites and strings outlive the calls (sites are leaked, the
// string arguments are NUL-terminated and alive for the call, or leaked
// where the string ABI needs them for the life of the process).
impl Api {
    /// `perfflow_site_enter_id`: an async event of `site` with the caller's id.
    #[inline]
    pub fn site_enter_id(&self, site: &'static Site, id: u64) {
        // SAFETY: see above.
        unsafe { (self.site_enter_id)(site, id) }
    }

    /// `perfflow_site_exit_id`.
    #[inline]
    pub fn site_exit_id(&self, site: &'static Site, id: u64) {
        // SAFETY: see above.
        unsafe { (self.site_exit_id)(site, id) }
    }

    /// `perfflow_enabled`, a relaxed load.
    #[inline]
    pub fn enabled(&self) -> bool {
        self.enabled.load(Ordering::Relaxed)
    }

    #[inline]
    pub fn site_enter(&self, site: &'static Site) {
        // SAFETY: see above.
        unsafe { (self.site_enter)(site) }
    }

    #[inline]
    pub fn site_exit(&self, site: &'static Site) {
        // SAFETY: see above.
        unsafe { (self.site_exit)(site) }
    }

    /// `perfflow_site_exit_unwind`: the exit of a call left by an
    /// exception, whose slice the trace marks `raised`.
    pub fn site_exit_unwind(&self, site: &'static Site) {
        // SAFETY: see above.
        unsafe { (self.site_exit_unwind)(site) }
    }

    /// `perfflow_weave_before` (`after` false) or `perfflow_weave_after`
    /// of an async call with the strings `[module, function, scope, flow,
    /// pcut]`.
    pub fn weave_async(&self, after: bool, strings: [*const c_char; 5]) {
        let [module, function, scope, flow, pcut] = strings;
        let call = if after {
            self.weave_after
        } else {
            self.weave_before
        };
        // SAFETY: see above.
        unsafe { call(1, module, function, scope, flow, pcut) }
    }

    pub fn region_begin(&self, name: *const c_char) {
        // SAFETY: see above.
        unsafe { (self.region_begin)(name) }
    }

    pub fn region_end(&self, name: *const c_char) {
        // SAFETY: see above.
        unsafe { (self.region_end)(name) }
    }

    /// `perfflow_region_end_unwind`: the end of a region left by an
    /// exception, whose slice the trace marks `raised`.
    pub fn region_end_unwind(&self, name: *const c_char) {
        // SAFETY: see above.
        unsafe { (self.region_end_unwind)(name) }
    }

    pub fn async_begin(&self, name: *const c_char, scope: *const c_char) -> u64 {
        // SAFETY: see above.
        unsafe { (self.async_begin)(name, scope) }
    }

    pub fn async_end(&self, name: *const c_char, scope: *const c_char, id: u64) {
        // SAFETY: see above.
        unsafe { (self.async_end)(name, scope, id) }
    }

    /// `perfflow_async_end_unwind`: the end of an operation left by an
    /// exception, whose `e` the trace marks `raised`.
    pub fn async_end_unwind(&self, name: *const c_char, scope: *const c_char, id: u64) {
        // SAFETY: see above.
        unsafe { (self.async_end_unwind)(name, scope, id) }
    }

    pub fn dropped_events(&self) -> u64 {
        (self.dropped)()
    }

    pub fn finish(&self) {
        (self.finish)()
    }

    /// Path of the library the functions come from.
    pub fn origin(&self) -> &str {
        &self.origin
    }
}

fn dlerror_text() -> String {
    // SAFETY: dlerror returns null or a NUL-terminated message.
    let message = unsafe { libc::dlerror() };
    if message.is_null() {
        "unknown error".to_string()
    } else {
        // SAFETY: non-null, NUL-terminated (above).
        unsafe { CStr::from_ptr(message) }
            .to_string_lossy()
            .into_owned()
    }
}

/// The file this module was loaded from.
fn own_path() -> Result<CString, String> {
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    let here = own_path as *const c_void;
    // SAFETY: `info` is writable; `here` is an address inside this module.
    if unsafe { libc::dladdr(here, &mut info) } == 0 || info.dli_fname.is_null() {
        return Err("perfflow: cannot find the file of perfflow._native".to_string());
    }
    // SAFETY: dladdr set a NUL-terminated path.
    Ok(unsafe { CStr::from_ptr(info.dli_fname) }.to_owned())
}

/// Opens the runtime library: one already in the process, else
/// `PERFFLOW_RUNTIME_LIB`, else this module's own copy; global in each case.
fn open() -> Result<(*mut c_void, String), String> {
    let flags = libc::RTLD_NOW | libc::RTLD_GLOBAL;
    let own = own_path()?;
    // SAFETY: dlopen with NUL-terminated names. The module is loaded, so
    // the second call only makes it global.
    let (loaded, itself) = unsafe {
        (
            libc::dlopen(SONAME.as_ptr(), flags | libc::RTLD_NOLOAD),
            libc::dlopen(own.as_ptr(), flags | libc::RTLD_NOLOAD),
        )
    };
    if itself.is_null() {
        return Err(format!(
            "perfflow: cannot reopen perfflow._native: {}",
            dlerror_text()
        ));
    }
    // This module has the runtime's SONAME too (see build.rs): finding
    // itself means no other runtime was loaded before it.
    if !loaded.is_null() && loaded != itself {
        return Ok((
            loaded,
            "libperfflow_runtime.so (loaded before perfflow)".to_string(),
        ));
    }
    if let Some(path) = std::env::var_os(ENV_VAR).filter(|p| !p.is_empty()) {
        let text = path.to_string_lossy().into_owned();
        let c = CString::new(text.clone())
            .map_err(|_| format!("{ENV_VAR}={text}: a path cannot contain a NUL character"))?;
        // SAFETY: as above.
        let handle = unsafe { libc::dlopen(c.as_ptr(), flags) };
        if handle.is_null() {
            return Err(format!(
                "{ENV_VAR}={text}: cannot load it ({}); expected the path of libperfflow_runtime.so",
                dlerror_text()
            ));
        }
        return Ok((handle, text));
    }
    Ok((itself, own.to_string_lossy().into_owned()))
}

fn symbol(handle: *mut c_void, name: &CStr, origin: &str) -> Result<*mut c_void, String> {
    // SAFETY: `handle` came from dlopen; `name` is NUL-terminated.
    let found = unsafe { libc::dlsym(handle, name.as_ptr()) };
    if found.is_null() {
        Err(format!(
            "perfflow: {origin} has no {} (not a perfflow runtime, or an older one)",
            name.to_string_lossy()
        ))
    } else {
        Ok(found)
    }
}

/// Chooses the runtime and looks up its interface; runs once per process
/// (at the module's import).
pub fn init() -> Result<(), String> {
    if API.get().is_some() {
        return Ok(());
    }
    let (handle, origin) = open()?;
    let f = |name: &CStr| symbol(handle, name, &origin);
    // SAFETY: each symbol is the function or object perfflow.h declares
    // under that name, so the pointer types match.
    let api = unsafe {
        Api {
            site_enter: std::mem::transmute::<*mut c_void, SiteFn>(f(c"perfflow_site_enter")?),
            site_exit: std::mem::transmute::<*mut c_void, SiteFn>(f(c"perfflow_site_exit")?),
            site_exit_unwind: std::mem::transmute::<*mut c_void, SiteFn>(f(
                c"perfflow_site_exit_unwind",
            )?),
            site_enter_id: std::mem::transmute::<*mut c_void, SiteIdFn>(f(
                c"perfflow_site_enter_id",
            )?),
            site_exit_id: std::mem::transmute::<*mut c_void, SiteIdFn>(f(
                c"perfflow_site_exit_id",
            )?),
            weave_before: std::mem::transmute::<*mut c_void, WeaveFn>(f(c"perfflow_weave_before")?),
            weave_after: std::mem::transmute::<*mut c_void, WeaveFn>(f(c"perfflow_weave_after")?),
            region_begin: std::mem::transmute::<*mut c_void, RegionFn>(f(
                c"perfflow_region_begin",
            )?),
            region_end: std::mem::transmute::<*mut c_void, RegionFn>(f(c"perfflow_region_end")?),
            region_end_unwind: std::mem::transmute::<*mut c_void, RegionFn>(f(
                c"perfflow_region_end_unwind",
            )?),
            async_begin: std::mem::transmute::<*mut c_void, AsyncBeginFn>(f(
                c"perfflow_async_begin",
            )?),
            async_end: std::mem::transmute::<*mut c_void, AsyncEndFn>(f(c"perfflow_async_end")?),
            async_end_unwind: std::mem::transmute::<*mut c_void, AsyncEndFn>(f(
                c"perfflow_async_end_unwind",
            )?),
            dropped: std::mem::transmute::<*mut c_void, DroppedFn>(f(c"perfflow_dropped_events")?),
            finish: std::mem::transmute::<*mut c_void, FinishFn>(f(c"perfflow_finish")?),
            enabled: &*(f(c"perfflow_enabled")? as *const AtomicBool),
            origin: origin.clone(),
        }
    };
    let _ = API.set(api);
    Ok(())
}
