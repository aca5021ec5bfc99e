//! libmunge's symbols, loaded from `libmunge.so.2` (Debian's `libmunge2`),
//! and its error codes as [`Kind`]s. The numbers are munge.h's, stable
//! since MUNGE 0.5.

use super::Kind;
use libc::{c_char, c_int, c_void, gid_t, uid_t};

pub type RawCtx = *mut c_void;

pub const OPT_SOCKET: c_int = 8;

type EncodeFn = unsafe extern "C" fn(*mut *mut c_char, RawCtx, *const c_void, c_int) -> c_int;
type DecodeFn = unsafe extern "C" fn(
    *const c_char,
    RawCtx,
    *mut *mut c_void,
    *mut c_int,
    *mut uid_t,
    *mut gid_t,
) -> c_int;
type StrerrorFn = unsafe extern "C" fn(c_int) -> *const c_char;
type CtxCreateFn = unsafe extern "C" fn() -> RawCtx;
type CtxDestroyFn = unsafe extern "C" fn(RawCtx);
type CtxSetFn = unsafe extern "C" fn(RawCtx, c_int, ...) -> c_int;
type CtxStrerrorFn = unsafe extern "C" fn(RawCtx) -> *const c_char;

/// The library and the functions taken from it; the pointers stay valid
/// while `_lib` is loaded, which is as long as this lives.
pub struct Lib {
    pub encode: EncodeFn,
    pub decode: DecodeFn,
    pub strerror: StrerrorFn,
    pub ctx_create: CtxCreateFn,
    pub ctx_destroy: CtxDestroyFn,
    pub ctx_set: CtxSetFn,
    pub ctx_strerror: CtxStrerrorFn,
    _lib: libloading::Library,
}

// SAFETY: libmunge's functions are thread-safe when each call has its own
// context (munge(3)), which `Munge` guarantees; the pointers are plain code.
unsafe impl Send for Lib {}
// SAFETY: as above.
unsafe impl Sync for Lib {}

impl Lib {
    pub fn load() -> Result<Lib, String> {
        let names = ["libmunge.so.2", "libmunge.so"];
        let mut last = String::new();
        for name in names {
            // SAFETY: libmunge's initialisers only set up its own state.
            match unsafe { libloading::Library::new(name) } {
                Ok(lib) => return Lib::symbols(lib).map_err(|e| format!("{name}: {e}")),
                Err(e) => last = e.to_string(),
            }
        }
        Err(format!("libmunge is not installed (install the munge package): {last}"))
    }

    fn symbols(lib: libloading::Library) -> Result<Lib, libloading::Error> {
        // SAFETY: each type is the function's prototype in munge.h.
        unsafe {
            Ok(Lib {
                encode: *lib.get::<EncodeFn>(b"munge_encode\0")?,
                decode: *lib.get::<DecodeFn>(b"munge_decode\0")?,
                strerror: *lib.get::<StrerrorFn>(b"munge_strerror\0")?,
                ctx_create: *lib.get::<CtxCreateFn>(b"munge_ctx_create\0")?,
                ctx_destroy: *lib.get::<CtxDestroyFn>(b"munge_ctx_destroy\0")?,
                ctx_set: *lib.get::<CtxSetFn>(b"munge_ctx_set\0")?,
                ctx_strerror: *lib.get::<CtxStrerrorFn>(b"munge_ctx_strerror\0")?,
                _lib: lib,
            })
        }
    }
}

/// munge.h's `munge_err_t` as what a caller needs to know.
pub fn kind(code: c_int) -> Kind {
    match code {
        6 | 7 => Kind::Socket,
        8..=14 => Kind::Invalid,
        15 => Kind::Expired,
        16 => Kind::Rewound,
        17 => Kind::Replayed,
        18 => Kind::Unauthorized,
        _ => Kind::Other,
    }
}
