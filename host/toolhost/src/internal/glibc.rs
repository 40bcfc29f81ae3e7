//! A slow `memcpy` in glibc before 2.40 on AMD processors, and how the
//! `toolhost` binary avoids it.
//!
//! From a size threshold (2,112 bytes on processors with FSRM) up to the L2
//! cache's size, glibc's `memcpy` and `memmove` copy with `REP MOVSB` when
//! the processor advertises fast string instructions (ERMS). On AMD Zen 3 and Zen 4 that instruction is about
//! twenty times slower when the destination lies 1 to 15 bytes past the
//! source modulo 64 (glibc bug 30994). glibc's fix (2024; taken here to be
//! in 2.40 and later) sets the threshold on AMD to the non-temporal one,
//! past which `REP MOVSB` is never chosen.
//! A tool call's payload meets that case every time: `hello`'s
//! `format!("Hello, {name}!")` copies a 16 KiB name seven bytes along, and
//! wasmtime carries out the guest's `memory.copy` with the host's `memmove`.
//! `BENCHMARKS.md` ("Copies at slow offsets") has what it cost on this
//! project's AMD machines with glibc 2.36, per copy and per call, with the
//! commands that measured it.
//!
//! glibc reads its tunables once, as a process starts, so the remedy
//! belongs to whoever starts the process: the operator sets
//! `GLIBC_TUNABLES=glibc.cpu.x86_rep_movsb_threshold=1073741824` in the
//! service's or container's environment (see the deployment docs). The
//! `toolhost` binary never executes itself again to apply it: a server that
//! restarts itself surprises supervisors and debuggers, and the effect
//! depends on one machine's processor and C library. `toolhost serve` only
//! says so at start, once, where [`tunables`] finds the machine affected.

/// glibc's tunable for the size from which copies use `REP MOVSB`.
pub const REP_MOVSB_THRESHOLD: &str = "glibc.cpu.x86_rep_movsb_threshold";

/// The threshold [`tunables`] names: larger than any L2 cache, so that `REP
/// MOVSB` is never chosen (from the L2's size on, glibc uses its vector
/// loops, then non-temporal stores).
pub const ABOVE_ANY_L2: u64 = 1 << 30;

/// The value of `GLIBC_TUNABLES` under which this process's copies would
/// avoid the slow case: the current value with [`REP_MOVSB_THRESHOLD`]
/// added. `None` when there is nothing to avoid (see the module
/// documentation) or the variable already sets that threshold.
pub fn tunables() -> Option<String> {
    if !slow_rep_movsb() {
        return None;
    }
    let current = std::env::var_os("GLIBC_TUNABLES").unwrap_or_default();
    let current = current.to_str()?;
    if current.contains("x86_rep_movsb_threshold") {
        return None;
    }
    let ours = format!("{REP_MOVSB_THRESHOLD}={ABOVE_ANY_L2}");
    Some(if current.is_empty() {
        ours
    } else {
        format!("{current}:{ours}")
    })
}

/// The advice for an operator whose machine copies slowly (see the
/// module documentation), or `None` where there is nothing to do.
pub fn advice() -> Option<String> {
    let tunables = tunables()?;
    Some(format!(
        "this machine's glibc (before 2.40, on an AMD processor with ERMS) copies large tool payloads slowly at some offsets (glibc bug 30994); start toolhost with GLIBC_TUNABLES={tunables} in its environment (the service's or container's) to avoid it"
    ))
}

/// Whether this process's `memcpy` is glibc's before 2.40 on an AMD
/// processor with ERMS.
fn slow_rep_movsb() -> bool {
    glibc_before_2_40() && amd_with_erms()
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn glibc_before_2_40() -> bool {
    // SAFETY: `gnu_get_libc_version` returns a pointer to a static,
    // NUL-terminated string.
    let version = unsafe { std::ffi::CStr::from_ptr(libc::gnu_get_libc_version()) };
    version
        .to_str()
        .ok()
        .and_then(parse_version)
        .is_some_and(|v| v < (2, 40))
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn glibc_before_2_40() -> bool {
    false
}

/// `(major, minor)` of a glibc version such as `2.36` or `2.39.9000`.
fn parse_version(text: &str) -> Option<(u32, u32)> {
    let mut parts = text.split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some((major, minor))
}

#[cfg(target_arch = "x86_64")]
fn amd_with_erms() -> bool {
    use std::arch::x86_64::{__cpuid, __cpuid_count};
    let vendor = __cpuid(0);
    let amd = is_amd(vendor.ebx, vendor.edx, vendor.ecx);
    // ERMS: leaf 7, subleaf 0, EBX bit 9.
    amd && vendor.eax >= 7 && __cpuid_count(7, 0).ebx & (1 << 9) != 0
}

#[cfg(not(target_arch = "x86_64"))]
fn amd_with_erms() -> bool {
    false
}

/// Whether CPUID leaf 0's vendor registers spell `AuthenticAMD`.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
fn is_amd(ebx: u32, edx: u32, ecx: u32) -> bool {
    let mut vendor = [0u8; 12];
    vendor[..4].copy_from_slice(&ebx.to_le_bytes());
    vendor[4..8].copy_from_slice(&edx.to_le_bytes());
    vendor[8..].copy_from_slice(&ecx.to_le_bytes());
    &vendor == b"AuthenticAMD"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_read_as_glibc_writes_them() {
        assert_eq!(parse_version("2.36"), Some((2, 36)));
        assert_eq!(parse_version("2.39.9000"), Some((2, 39)));
        assert_eq!(parse_version("2"), None);
        assert_eq!(parse_version("two.36"), None);
        assert!(parse_version("2.39").unwrap() < (2, 40));
        assert!(parse_version("2.40").unwrap() >= (2, 40));
        assert!(parse_version("3.0").unwrap() >= (2, 40));
    }

    #[test]
    fn the_vendor_is_read_from_ebx_edx_ecx() {
        let word = |s: &[u8; 4]| u32::from_le_bytes(*s);
        assert!(is_amd(word(b"Auth"), word(b"enti"), word(b"cAMD")));
        assert!(!is_amd(word(b"Genu"), word(b"ineI"), word(b"ntel")));
    }
}
