//! `perfflow._native`: the Python binding of the perfflow runtime.
//!
//! One runtime per process. This module carries a copy of the runtime (it
//! links the `perfflow-runtime` crate, so `pip install` needs nothing else),
//! but it records every event through the C interface of whichever runtime
//! the process already uses, found once at import ([`runtime::init`]):
//!
//! 1. a `libperfflow_runtime.so` already loaded (by a woven library or
//!    extension imported earlier): found by its SONAME;
//! 2. else the library named by `PERFFLOW_RUNTIME_LIB`;
//! 3. else the copy inside this module, which has the shared runtime's
//!    SONAME (`build.rs`).
//!
//! The chosen library is made global (`RTLD_GLOBAL`), so a woven library
//! loaded later binds its `perfflow_*` calls to the same runtime: one set of
//! buffers, one writer thread, one trace file. In case 3 a woven library
//! linked against `libperfflow_runtime.so` and loaded later does not even
//! map a second copy: the loader finds its dependency loaded, by SONAME.
//!
//! A traced function is a Python wrapper (`perfflow._wrap`) around calls
//! of a [`SiteHandle`], which holds the address of a site descriptor made
//! once per name, category and pointcut: a call costs two calls into the
//! runtime's hot path and two relaxed loads of `perfflow_enabled`: no lock,
//! no allocation, no Python-side state shared between threads.

// PyO3 0.22's generated method glue converts errors into themselves.
#![allow(clippy::useless_conversion)]

use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::{CStr, CString};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};

use perfflow_runtime::site::{Flow, Pointcut, Site};
use pyo3::exceptions::{PyImportError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyType;

mod regions;
mod runtime;

use runtime::Api;

/// The runtime this process records through, loaded at import.
fn api() -> &'static Api {
    runtime::get()
}

/// Leaks `text` as a C string that lives until the process exits (site
/// strings must). Interior NULs are cut off, as C would see the string.
fn leak(text: &str) -> &'static CStr {
    let bytes = text.split('\0').next().unwrap_or("");
    let owned = CString::new(bytes).unwrap_or_default();
    Box::leak(owned.into_boxed_c_str())
}

/// Leaks a site descriptor for a decorated function or an event name.
fn leak_site(pointcut: Pointcut, flow: Flow, name: &str, file: &str, scope: &str) -> &'static Site {
    let scope = (!scope.is_empty() && !scope.eq_ignore_ascii_case("NA")).then(|| leak(scope));
    let name = leak(name);
    Box::leak(Box::new(Site::new(
        pointcut,
        flow,
        name,
        leak(file),
        scope,
        name,
    )))
}

/// True for the exceptions that do not make a span `raised`: StopIteration
/// ends an iteration (a generator's last resumption, an iterator's
/// `__next__`), GeneratorExit is a generator or coroutine being closed
/// early, which its caller does not see as an exception.
/// `ty` is the exception's type.
fn is_normal_end(ty: &Bound<'_, PyAny>) -> bool {
    use pyo3::exceptions::{PyGeneratorExit, PyStopIteration};
    ty.downcast::<PyType>().is_ok_and(|ty| {
        ty.is_subclass_of::<PyStopIteration>().unwrap_or(false)
            || ty.is_subclass_of::<PyGeneratorExit>().unwrap_or(false)
    })
}

// The site of a traced function (no doc comment: the class's `__doc__`
// would be this text). `perfflow._wrap` calls `enter` before the function
// and `exit` or `exit_raised` after it, from a Python wrapper: no frame of
// this module is on the stack while the function runs, so whatever ends
// the thread there (CPython ends daemon threads at exit with
// `pthread_exit`, an unwind no Rust frame may stop) passes through Python
// and C frames only.
#[pyclass(module = "perfflow._native", name = "Site", frozen)]
struct SiteHandle {
    site: &'static Site,
}

#[pymethods]
impl SiteHandle {
    fn enter(&self) {
        let api = api();
        if api.enabled() {
            api.site_enter(self.site);
        }
    }

    fn exit(&self) {
        let api = api();
        if api.enabled() {
            api.site_exit(self.site);
        }
    }

    /// The exit of a call left by an exception: its span's end says
    /// `raised`.
    fn exit_raised(&self) {
        let api = api();
        if api.enabled() {
            api.site_exit_unwind(self.site);
        }
    }

    fn __repr__(&self) -> String {
        format!(
            "<perfflow site {:?}>",
            String::from_utf8_lossy(self.site.name())
        )
    }
}

// The resumptions of one generator of a traced generator function, each
// one span on the thread that resumes it (`perfflow._wrap` drives the
// generator): `begin` before a resumption, `end` after it.
#[pyclass(module = "perfflow._native", frozen)]
struct Resumptions {
    site: &'static Site,
    /// Regions open at the last `yield`: a slice of each in every
    /// resumption that runs its code (see `regions.rs`).
    suspended: regions::Suspended,
}

#[pymethods]
impl Resumptions {
    #[new]
    fn new(site: &Bound<'_, SiteHandle>) -> Resumptions {
        Resumptions {
            site: site.get().site,
            suspended: Default::default(),
        }
    }

    /// Enters the span and begins again the regions open at the last
    /// `yield`; returns the height of the thread's region stack, for `end`.
    fn begin(&self, py: Python<'_>) -> usize {
        let api = api();
        if api.enabled() {
            api.site_enter(self.site);
        }
        regions::resume(py, api, &self.suspended)
    }

    /// Ends the regions left open above `height` (kept for the next
    /// resumption), then the span; `raised` when the resumption was left
    /// by an exception other than the generator's normal end.
    fn end(&self, py: Python<'_>, height: usize, raised: bool) {
        let api = api();
        regions::suspend(py, api, height, &self.suspended);
        if api.enabled() {
            if raised {
                api.site_exit_unwind(self.site);
            } else {
                api.site_exit(self.site);
            }
        }
    }
}

/// The site of a traced function: named `name`, in category `file`, made
/// once per process for the same arguments (a function decorated again and
/// again, as a nested function is, shares it).
#[pyfunction]
#[pyo3(signature = (name, file, pointcut = "around", scope = "", flow = "NA"))]
fn site(name: &str, file: &str, pointcut: &str, scope: &str, flow: &str) -> PyResult<SiteHandle> {
    let pointcut = parse_pointcut(pointcut)?;
    let flow = Flow::parse(Some(flow.as_bytes()));
    Ok(SiteHandle {
        site: cached_site((
            pointcut,
            flow,
            name.to_string(),
            file.to_string(),
            scope.to_string(),
        )),
    })
}

/// The pointcuts `critical_path` accepts, as upstream names them.
fn parse_pointcut(text: &str) -> PyResult<Pointcut> {
    match text {
        "around" => Ok(Pointcut::Around),
        "before" => Ok(Pointcut::Before),
        "after" => Ok(Pointcut::After),
        "around_async" => Ok(Pointcut::AroundAsync),
        "before_async" => Ok(Pointcut::BeforeAsync),
        "after_async" => Ok(Pointcut::AfterAsync),
        other => Err(PyValueError::new_err(format!(
            "invalid pointcut {other:?}: expected around, before, after, around_async, before_async or after_async"
        ))),
    }
}

/// A region of code, `with perfflow.region("name"):`, recorded on the
/// calling thread (category `region`). With a `flow`, the region is a slice
/// that flows of `scope` arrive at or leave (the runtime's flow rule). Open
/// across a `yield` of a traced generator, it is a slice in each
/// resumption that runs its code (`regions.rs`).
#[pyclass(module = "perfflow._native", frozen)]
struct Region {
    name: CString,
    /// The site of a region with a flow; regions without one use the
    /// runtime's region interface.
    site: Option<&'static Site>,
    /// For a region with a flow: the same region without it, for its
    /// slices after the first.
    twin: Option<&'static Site>,
    splits: regions::Splits,
}

impl Region {
    /// The site of a slice: the region's own, or its `twin`'s.
    fn site_of(&self, twin: bool) -> Option<&'static Site> {
        if twin {
            self.twin
        } else {
            self.site
        }
    }

    fn begin(&self, api: &Api, twin: bool) {
        if api.enabled() {
            match self.site_of(twin) {
                Some(site) => api.site_enter(site),
                None => api.region_begin(self.name.as_ptr()),
            }
        }
    }

    fn end(&self, api: &Api, twin: bool, raised: bool) {
        if api.enabled() {
            match (self.site_of(twin), raised) {
                (Some(site), true) => api.site_exit_unwind(site),
                (Some(site), false) => api.site_exit(site),
                (None, true) => api.region_end_unwind(self.name.as_ptr()),
                (None, false) => api.region_end(self.name.as_ptr()),
            }
        }
    }
}

#[pymethods]
impl Region {
    #[new]
    #[pyo3(signature = (name, scope = None, flow = None))]
    fn new(name: &str, scope: Option<&str>, flow: Option<&str>) -> PyResult<Region> {
        let c = CString::new(name)
            .map_err(|_| PyValueError::new_err("a region name cannot contain a NUL character"))?;
        let region_site = |flow| {
            cached_site((
                Pointcut::Around,
                flow,
                name.to_string(),
                perfflow_runtime::site::REGION_FILE.to_string(),
                scope.unwrap_or("").to_string(),
            ))
        };
        let (site, twin) = match flow {
            None => (None, None),
            Some(text) => {
                let parsed = Flow::parse(Some(text.as_bytes()));
                if parsed == Flow::None {
                    return Err(PyValueError::new_err(format!(
                        "invalid flow {text:?}: expected in, out, inout or outin"
                    )));
                }
                (Some(region_site(parsed)), Some(region_site(Flow::None)))
            }
        };
        Ok(Region {
            name: c,
            site,
            twin,
            splits: Default::default(),
        })
    }

    fn __enter__(slf: Bound<'_, Self>) -> Bound<'_, Self> {
        let api = api();
        if api.enabled() {
            slf.get().begin(api, false);
            regions::entered(&slf);
        }
        slf
    }

    #[pyo3(signature = (ty = None, _value = None, _tb = None))]
    fn __exit__(
        slf: Bound<'_, Self>,
        ty: Option<Bound<'_, PyAny>>,
        _value: Option<Bound<'_, PyAny>>,
        _tb: Option<Bound<'_, PyAny>>,
    ) -> bool {
        let raised = ty.is_some_and(|t| !t.is_none() && !is_normal_end(&t));
        if let regions::Exit::End { twin } = regions::exiting(&slf) {
            slf.get().end(api(), twin, raised);
        }
        false
    }
}

fn c_string(text: &str, what: &str) -> PyResult<CString> {
    CString::new(text)
        .map_err(|_| PyValueError::new_err(format!("{what} cannot contain a NUL character")))
}

/// Begins an async operation and returns its id (see `perfflow.async_begin`).
#[pyfunction]
#[pyo3(signature = (name, scope = None))]
fn async_begin(name: &str, scope: Option<&str>) -> PyResult<u64> {
    let api = api();
    if !api.enabled() {
        return Ok(0);
    }
    let name = c_string(name, "a name")?;
    let scope = c_string(scope.unwrap_or(""), "a scope")?;
    Ok(api.async_begin(name.as_ptr(), scope.as_ptr()))
}

/// Ends the async operation `id` (see `perfflow.async_end`); with `raised`,
/// its end says it was left by an exception.
#[pyfunction]
#[pyo3(signature = (name, id, scope = None, raised = false))]
fn async_end(name: &str, id: u64, scope: Option<&str>, raised: bool) -> PyResult<()> {
    if id == 0 {
        return Ok(());
    }
    let name = c_string(name, "a name")?;
    let scope = c_string(scope.unwrap_or(""), "a scope")?;
    if raised {
        api().async_end_unwind(name.as_ptr(), scope.as_ptr(), id);
    } else {
        api().async_end(name.as_ptr(), scope.as_ptr(), id);
    }
    Ok(())
}

/// What a site made at run time is for, with its strings.
type SiteKey = (Pointcut, Flow, String, String, String);

/// The site `leak_site` makes of `key` (pointcut, flow, name, file, scope),
/// made once per process: looked up in a per-thread cache first, so threads
/// share no lock per event; a miss takes the global map's lock once per
/// thread and key.
fn cached_site(key: SiteKey) -> &'static Site {
    thread_local! {
        static CACHE: RefCell<HashMap<SiteKey, &'static Site>> = RefCell::new(HashMap::new());
    }
    static GLOBAL: OnceLock<Mutex<HashMap<SiteKey, &'static Site>>> = OnceLock::new();
    if let Some(site) = CACHE.with(|c| c.borrow().get(&key).copied()) {
        return site;
    }
    let site = *GLOBAL
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .entry(key.clone())
        .or_insert_with(|| {
            let (pointcut, flow, name, file, scope) = &key;
            leak_site(*pointcut, *flow, name, file, scope)
        });
    CACHE.with(|c| c.borrow_mut().insert(key, site));
    site
}

/// The site of `sync_event` calls of `name` in `category`.
fn sync_site(category: &str, name: &str) -> &'static Site {
    cached_site((
        Pointcut::Around,
        Flow::None,
        name.to_string(),
        category.to_string(),
        String::new(),
    ))
}

/// Upstream `aspect.sync_event`: `before` writes a `B` event named `name`
/// in `category`, `after` the matching `E` (on the same thread).
#[pyfunction]
fn sync_event(pointcut: &str, name: &str, category: &str) -> PyResult<()> {
    let api = api();
    let enter = match pointcut {
        "before" => true,
        "after" => false,
        other => {
            return Err(PyValueError::new_err(format!(
                "Invalid pointcut: {other} (sync_event takes before or after)"
            )))
        }
    };
    if !api.enabled() {
        return Ok(());
    }
    let site = sync_site(category, name);
    if enter {
        api.site_enter(site);
    } else {
        api.site_exit(site);
    }
    Ok(())
}

/// The strings of one `async_event` (name, category, scope), leaked once
/// so the runtime's string ABI recognises them by address.
struct AsyncStrings {
    module: &'static CStr,
    function: &'static CStr,
    scope: &'static CStr,
}

fn async_strings(name: &str, category: &str, scope: &str) -> &'static AsyncStrings {
    type Key = (String, String, String);
    thread_local! {
        static CACHE: RefCell<HashMap<Key, &'static AsyncStrings>> = RefCell::new(HashMap::new());
    }
    static GLOBAL: OnceLock<Mutex<HashMap<Key, &'static AsyncStrings>>> = OnceLock::new();
    let key = (name.to_string(), category.to_string(), scope.to_string());
    if let Some(found) = CACHE.with(|c| c.borrow().get(&key).copied()) {
        return found;
    }
    let found = *GLOBAL
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .entry(key.clone())
        .or_insert_with(|| {
            Box::leak(Box::new(AsyncStrings {
                // The upstream ABI's module is not shown for async events; it
                // keeps operations of different scopes apart.
                module: leak(if scope.is_empty() { "NA" } else { scope }),
                function: leak(name),
                // The category of an async event is its site's scope.
                scope: leak(category),
            }))
        });
    CACHE.with(|c| c.borrow_mut().insert(key, found));
    found
}

/// The site of `async_event` calls given an id: `around_async` (a `b` at
/// enter, an `e` at exit) or, for instants, `before_async` (an `n`), with
/// `category` as the events' category. Cached per thread like [`sync_site`].
fn async_id_site(name: &str, category: &str, instant: bool) -> &'static Site {
    let pointcut = if instant {
        Pointcut::BeforeAsync
    } else {
        Pointcut::AroundAsync
    };
    cached_site((
        pointcut,
        Flow::None,
        name.to_string(),
        "NA".to_string(),
        category.to_string(),
    ))
}

/// Upstream `aspect.async_event`: `before` writes a `b` event, `after` the
/// matching `e` (the k-th `after` of a name, category and scope ends its
/// k-th `before`, on any thread), `instant` an `n` event. Given an `id`
/// (a positive integer), the events carry it and the caller pairs them.
#[pyfunction]
#[pyo3(signature = (pointcut, name, category, scope = None, id = None))]
fn async_event(
    pointcut: &str,
    name: &str,
    category: &str,
    scope: Option<&str>,
    id: Option<Bound<'_, PyAny>>,
) -> PyResult<()> {
    // Like upstream, a false id (None, 0) means none was given.
    let id = match id.filter(|i| i.is_truthy().unwrap_or(true)) {
        None => None,
        Some(given) => Some(given.extract::<u64>().map_err(|_| {
            PyValueError::new_err(format!(
                "async_event id must be an integer from 0 to 2**64-1, got {}",
                given.repr().map(|r| r.to_string()).unwrap_or_default()
            ))
        })?),
    };
    let api = api();
    let (before, pcut): (bool, &'static CStr) = match pointcut {
        "before" => (true, c"around_async"),
        "after" => (false, c"around_async"),
        "instant" => (true, c"before_async"),
        other => {
            return Err(PyValueError::new_err(format!(
                "Invalid pointcut: {other} (async_event takes before, instant or after)"
            )))
        }
    };
    if !api.enabled() {
        return Ok(());
    }
    if let Some(id) = id {
        // The caller's id pairs the events: recorded at a site of its own.
        let site = async_id_site(name, category, pointcut == "instant");
        if before {
            api.site_enter_id(site, id);
        } else {
            api.site_exit_id(site, id);
        }
        return Ok(());
    }
    let s = async_strings(name, category, scope.unwrap_or(""));
    let strings = [
        s.module.as_ptr(),
        s.function.as_ptr(),
        s.scope.as_ptr(),
        c"NA".as_ptr(),
        pcut.as_ptr(),
    ];
    api.weave_async(!before, strings);
    Ok(())
}

/// True while events are recorded: false with `log-enable=False`, or once
/// the runtime found it could not write its trace.
#[pyfunction]
fn enabled() -> bool {
    api().enabled()
}

/// `log-enable` as `PERFFLOW_OPTIONS` sets it, read with the runtime's
/// own parser (decorators return functions unchanged when it is False).
#[pyfunction]
fn log_enable_option() -> bool {
    static ON: AtomicBool = AtomicBool::new(true);
    static READ: OnceLock<()> = OnceLock::new();
    READ.get_or_init(|| {
        let (options, _) = perfflow_runtime::options::Options::from_env();
        ON.store(options.log_enable, Ordering::Relaxed);
    });
    ON.load(Ordering::Relaxed)
}

/// Events dropped so far by the runtime.
#[pyfunction]
fn dropped_events() -> u64 {
    api().dropped_events()
}

/// Completes the trace now, as the process's exit would (for processes
/// that end with `os._exit`).
#[pyfunction]
fn finish() {
    api().finish();
}

/// Path of the library whose runtime records this process's events.
#[pyfunction]
fn runtime_library() -> String {
    api().origin().to_string()
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    runtime::init().map_err(PyImportError::new_err)?;
    m.add_class::<SiteHandle>()?;
    m.add_class::<Resumptions>()?;
    m.add_class::<Region>()?;
    m.add_function(wrap_pyfunction!(site, m)?)?;
    m.add_function(wrap_pyfunction!(async_begin, m)?)?;
    m.add_function(wrap_pyfunction!(async_end, m)?)?;
    m.add_function(wrap_pyfunction!(sync_event, m)?)?;
    m.add_function(wrap_pyfunction!(async_event, m)?)?;
    m.add_function(wrap_pyfunction!(enabled, m)?)?;
    m.add_function(wrap_pyfunction!(log_enable_option, m)?)?;
    m.add_function(wrap_pyfunction!(dropped_events, m)?)?;
    m.add_function(wrap_pyfunction!(runtime_library, m)?)?;
    m.add_function(wrap_pyfunction!(finish, m)?)?;
    Ok(())
}
